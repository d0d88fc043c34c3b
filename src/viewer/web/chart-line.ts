/**
 * A line chart (uPlot) of LineChartData: solid lines for the values, dashed
 * lighter ones for the burst view, a light band between min and max. The
 * chart is rebuilt when its lines change (a burst line appears), else its
 * data is replaced in place.
 */
import uPlot from 'uplot';
import { lineColor, withAlpha } from './colors.js';
import { type ChartFrame, frameOptions, linearYScale, logYScale, symmetricYScale, yAxis } from './chart-frame.js';
import type { LineChartData, LineSpec } from './series-shape.js';
import { flatZero, hoveredValues, isolatedPoints, positiveOnly } from './series-shape.js';
import { formatValue } from './units.js';

export interface LineChartOptions {
  readonly unit: string;
  readonly log: boolean;
  /** a difference: a y scale symmetric around zero, ticks closer together */
  readonly diff?: boolean;
  readonly height: number;
  /** the legend under the chart (default true) */
  readonly legend?: boolean;
  /** called after every draw */
  readonly onDraw?: () => void;
  /** uPlot plugins (the alert markers) */
  readonly plugins?: readonly uPlot.Plugin[];
}

/**
 * Points where a line draws nothing: uPlot shows every point only when they
 * are sparse on screen; otherwise a step whose neighbours are gaps (a sparse
 * latency percentile, a single-sample spike) would be invisible.
 */
function lonePoints(size: number, color: string): uPlot.Series.Points {
  return {
    size,
    fill: color,
    filter: (u: uPlot, si: number, show: boolean) => {
      if (show) return null;
      const idxs = isolatedPoints(u.data[si] ?? []);
      return idxs.length === 0 ? null : idxs;
    },
  };
}

function seriesOptions(line: LineSpec, unit: string): uPlot.Series {
  const color = lineColor(line.series);
  const value = (_u: uPlot, v: number | null) => (v === null ? '—' : formatValue(v, unit));
  switch (line.role) {
    case 'burst':
      return { label: line.label, stroke: withAlpha(color, 0.6), width: 1, dash: [5, 3], value, points: { show: false, ...lonePoints(4, withAlpha(color, 0.6)) } };
    case 'min':
    case 'max':
      return { label: line.label, stroke: withAlpha(color, 0.35), width: 0.5, value, points: { show: false }, class: 'band-edge' };
    case 'b':
      return { label: line.label, stroke: color, width: 1.5, dash: [7, 4], value, points: lonePoints(5, color) };
    default:
      return { label: line.label, stroke: color, width: 1.5, value, points: lonePoints(5, color) };
  }
}

/** more lines than this: no uPlot legend but a list of the hovered values, largest first, and all-zero lines hidden */
export const MANY_LINES = 6;
/** the hover list's length */
const HOVER_ROWS = 10;

export class LineChart {
  private plot: uPlot | undefined;
  private shape = '';
  private lines: LineSpec[] = [];
  private zeros: boolean[] = [];
  private showZero = false;
  private readonly aside = document.createElement('div');
  private readonly hover = document.createElement('div');
  private readonly zeroToggle = document.createElement('button');

  constructor(
    private readonly parent: HTMLElement,
    private readonly frame: ChartFrame,
    private readonly opts: LineChartOptions,
  ) {
    this.aside.className = 'many-lines';
    this.hover.className = 'hover-values';
    this.zeroToggle.type = 'button';
    this.zeroToggle.className = 'zero-toggle';
    this.zeroToggle.addEventListener('click', () => {
      this.showZero = !this.showZero;
      this.applyZeros();
    });
    this.aside.append(this.zeroToggle, this.hover);
  }

  private get many(): boolean {
    return this.lines.filter((l) => l.role !== 'min' && l.role !== 'max').length > MANY_LINES;
  }

  /** all-zero lines of a chart of many lines: hidden unless the toggle says otherwise */
  private applyZeros(): void {
    const hidden = this.zeros.filter(Boolean).length;
    this.zeroToggle.hidden = !this.many || hidden === 0;
    this.zeroToggle.textContent = this.showZero ? `hide ${hidden} all-zero lines` : `show ${hidden} all-zero lines`;
    const u = this.plot;
    if (u === undefined) return;
    this.zeros.forEach((z, i) => {
      const show = !(this.many && z && !this.showZero);
      if (u.series[i + 1]?.show !== show) u.setSeries(i + 1, { show });
    });
    this.describe(u);
  }

  /** the hovered step's values, largest first (charts of many lines) */
  private describe(u: uPlot): void {
    if (!this.many) return;
    const idx = u.cursor.idx;
    const shown = this.lines.map((l, i) => ({ l, i })).filter(({ l, i }) => l.role !== 'min' && l.role !== 'max' && u.series[i + 1]?.show !== false);
    if (idx === null || idx === undefined) {
      this.hover.textContent = `${shown.length} lines: hover for their values, largest first`;
      return;
    }
    const values = hoveredValues(
      shown.map(({ l }) => l),
      shown.map(({ i }) => (u.data[i + 1] ?? []) as (number | null)[]),
      idx,
    );
    const rows = values.slice(0, HOVER_ROWS).map(({ line, value }) => {
      const row = document.createElement('span');
      row.className = 'hv';
      const mark = document.createElement('i');
      mark.style.background = lineColor(line.series);
      row.append(mark, `${line.label}: ${formatValue(value, this.opts.unit)}`);
      return row;
    });
    const x = u.data[0][idx];
    const head = document.createElement('b');
    head.textContent = x === undefined ? '' : String(u.series[0]?.value instanceof Function ? u.series[0].value(u, x, 0, idx) : x);
    this.hover.replaceChildren(head, ...rows, values.length > HOVER_ROWS ? `+${values.length - HOVER_ROWS} more` : '');
  }

  /** uPlot's data as drawn (for the tests' window hook) */
  get data(): uPlot.AlignedData | undefined {
    return this.plot?.data;
  }

  set(d: LineChartData, width: number): void {
    const data: uPlot.AlignedData = [d.x, ...d.lines.map((l) => (this.opts.log ? positiveOnly(l.values) : l.values))];
    const shape = d.lines.map((l) => `${l.role}:${l.label}`).join('\n');
    this.lines = d.lines;
    this.zeros = d.lines.map((l) => flatZero(l.values));
    if (this.plot !== undefined && shape === this.shape) {
      this.plot.setData(data, true);
      this.applyZeros();
      return;
    }
    this.plot?.destroy();
    this.shape = shape;
    const o = frameOptions(this.frame, width, this.opts.height);
    o.series = [o.series[0] ?? {}, ...d.lines.map((l) => seriesOptions(l, this.opts.unit))];
    o.bands = d.bands.map(([hi, lo]) => ({ series: [hi + 1, lo + 1], fill: withAlpha(lineColor(d.lines[hi]?.series ?? 0), 0.12) }));
    o.scales = { ...o.scales, y: this.opts.log ? logYScale() : this.opts.diff === true ? symmetricYScale() : linearYScale() };
    o.axes = [...(o.axes ?? []), yAxis(this.opts.unit, this.opts.log, undefined, this.opts.diff === true ? 20 : undefined)];
    o.legend = { show: (this.opts.legend ?? true) && !this.many, live: true };
    const onDraw = this.opts.onDraw;
    if (onDraw !== undefined) o.hooks = { ...o.hooks, draw: [() => onDraw()] };
    o.hooks = { ...o.hooks, setCursor: [(u: uPlot) => this.describe(u)] };
    if (this.opts.plugins !== undefined) o.plugins = [...this.opts.plugins];
    this.plot = new uPlot(o, data, this.parent);
    this.aside.hidden = !this.many;
    this.parent.append(this.aside);
    this.applyZeros();
  }

  resize(width: number): void {
    this.plot?.setSize({ width, height: this.opts.height });
  }

  /** Draws again with the same data (the alert markers changed). */
  redraw(): void {
    this.plot?.redraw(false);
  }

  /** the plotting area's width in CSS pixels (the query budget) */
  plotWidth(): number | undefined {
    return this.plot === undefined ? undefined : Math.round(this.plot.bbox.width / devicePixelRatio);
  }

  destroy(): void {
    this.plot?.destroy();
    this.plot = undefined;
    this.aside.remove();
  }
}
