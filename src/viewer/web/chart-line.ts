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
import { isolatedPoints, positiveOnly } from './series-shape.js';
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

export class LineChart {
  private plot: uPlot | undefined;
  private shape = '';

  constructor(
    private readonly parent: HTMLElement,
    private readonly frame: ChartFrame,
    private readonly opts: LineChartOptions,
  ) {}

  /** uPlot's data as drawn (for the tests' window hook) */
  get data(): uPlot.AlignedData | undefined {
    return this.plot?.data;
  }

  set(d: LineChartData, width: number): void {
    const data: uPlot.AlignedData = [d.x, ...d.lines.map((l) => (this.opts.log ? positiveOnly(l.values) : l.values))];
    const shape = d.lines.map((l) => `${l.role}:${l.label}`).join('\n');
    if (this.plot !== undefined && shape === this.shape) {
      this.plot.setData(data, true);
      return;
    }
    this.plot?.destroy();
    this.shape = shape;
    const o = frameOptions(this.frame, width, this.opts.height);
    o.series = [o.series[0] ?? {}, ...d.lines.map((l) => seriesOptions(l, this.opts.unit))];
    o.bands = d.bands.map(([hi, lo]) => ({ series: [hi + 1, lo + 1], fill: withAlpha(lineColor(d.lines[hi]?.series ?? 0), 0.12) }));
    o.scales = { ...o.scales, y: this.opts.log ? logYScale() : this.opts.diff === true ? symmetricYScale() : linearYScale() };
    o.axes = [...(o.axes ?? []), yAxis(this.opts.unit, this.opts.log, undefined, this.opts.diff === true ? 20 : undefined)];
    o.legend = { show: this.opts.legend ?? true, live: true };
    const onDraw = this.opts.onDraw;
    if (onDraw !== undefined) o.hooks = { ...o.hooks, draw: [() => onDraw()] };
    this.plot = new uPlot(o, data, this.parent);
  }

  resize(width: number): void {
    this.plot?.setSize({ width, height: this.opts.height });
  }

  /** the plotting area's width in CSS pixels (the query budget) */
  plotWidth(): number | undefined {
    return this.plot === undefined ? undefined : Math.round(this.plot.bbox.width / devicePixelRatio);
  }

  destroy(): void {
    this.plot?.destroy();
    this.plot = undefined;
  }
}
