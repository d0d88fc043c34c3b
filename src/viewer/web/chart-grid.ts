/**
 * A heatmap on uPlot: the axes, cursor, sync and brush are uPlot's, the cells
 * are drawn by our own hook on the canvas before the grid lines. Rows are h2
 * buckets on a log y axis (colour = events, log scale) or CPUs on a linear
 * one (colour = value). A line under the chart says what the cursor is on.
 */
import uPlot from 'uplot';
import { type ChartFrame, Y_AXIS_SIZE, frameOptions, yAxis } from './chart-frame.js';
import { type ColorScale, colorLevel, gridMax, LEVELS, palette } from './heatmap-colors.js';
import { cellRects, colAt, type Grid, logFloor, rowAt, rowRange } from './heatmap-geometry.js';
import { formatClock } from './clock.js';
import { formatOffset, formatValue } from './units.js';

export interface GridData {
  readonly grid: Grid;
  /** bucket rows on a log axis (true), or one row per name on a linear axis */
  readonly yLog: boolean;
  /** row names (CPU ids) for a linear axis */
  readonly rowNames?: readonly string[];
  /** the unit of the row bounds (bucket values) */
  readonly rowUnit: string;
  /** the unit of the cell values */
  readonly valueUnit: string;
  readonly colors: ColorScale;
  /** the value of the darkest colour (default: the grid's largest): two heatmaps compared share one */
  readonly colorMax?: number;
}

export interface GridChartOptions {
  readonly height: number;
  readonly onDraw?: () => void;
  /** uPlot plugins (the alert markers) */
  readonly plugins?: readonly uPlot.Plugin[];
}

const PALETTE = palette(LEVELS);
const CPU_LABEL_SIZE = 14;
/** grid lines over the cells: light, so the colours stay readable */
const CELL_GRID = { stroke: 'rgba(255,255,255,0.45)', width: 1 };

export class GridChart {
  private plot: uPlot | undefined;
  private current: GridData | undefined;
  private readonly info: HTMLElement;
  private readonly legend: HTMLElement;
  private rowsKey = '';

  constructor(
    private readonly parent: HTMLElement,
    private readonly frame: ChartFrame,
    private readonly opts: GridChartOptions,
  ) {
    this.info = document.createElement('div');
    this.info.className = 'cell-info';
    this.legend = document.createElement('div');
    this.legend.className = 'color-legend';
  }

  get data(): GridData | undefined {
    return this.current;
  }

  set(d: GridData, width: number): void {
    this.current = d;
    const data: uPlot.AlignedData = [[...d.grid.x], d.grid.x.map(() => null)];
    this.renderLegend(d);
    const rowsKey = `${d.yLog}:${d.rowNames?.join(',') ?? ''}`;
    if (this.plot !== undefined && rowsKey === this.rowsKey) {
      this.plot.setData(data, true);
      return;
    }
    this.rowsKey = rowsKey;
    this.plot?.destroy();
    this.plot = new uPlot(this.options(d, width), data, this.parent);
    this.parent.append(this.info, this.legend);
  }

  resize(width: number): void {
    this.plot?.setSize({ width, height: this.opts.height });
  }

  /** Draws again with the same data (the alert markers changed). */
  redraw(): void {
    this.plot?.redraw(false);
  }

  plotWidth(): number | undefined {
    return this.plot === undefined ? undefined : Math.round(this.plot.bbox.width / devicePixelRatio);
  }

  destroy(): void {
    this.plot?.destroy();
    this.plot = undefined;
    this.info.remove();
    this.legend.remove();
  }

  private options(d: GridData, width: number): uPlot.Options {
    const o = frameOptions(this.frame, width, this.opts.height);
    o.legend = { show: false };
    o.series = [o.series[0] ?? {}, { label: 'cells', stroke: 'transparent', paths: () => null, points: { show: false } }];
    o.cursor = { ...o.cursor, points: { show: false } };
    const current = () => this.current ?? d;
    if (d.yLog) {
      o.scales = {
        ...o.scales,
        y: {
          distr: 3,
          log: 10,
          range: (): uPlot.Range.MinMax => {
            const [lo, hi] = rowRange(current().grid.lower, current().grid.upper, true);
            return uPlot.rangeLog(lo, hi, 10, true);
          },
        },
      };
      o.axes = [...(o.axes ?? []), yAxis(d.rowUnit, true, CELL_GRID)];
    } else {
      const names = d.rowNames ?? [];
      o.scales = { ...o.scales, y: { range: () => [0, Math.max(1, names.length)] } };
      o.axes = [
        ...(o.axes ?? []),
        {
          // the label's room comes out of the size: the plotting area starts where a line chart's does
          size: Y_AXIS_SIZE - CPU_LABEL_SIZE,
          label: 'CPU',
          labelSize: CPU_LABEL_SIZE,
          splits: (u: uPlot) => {
            const every = Math.max(1, Math.ceil((names.length * 14) / Math.max(1, u.bbox.height / devicePixelRatio)));
            return names.map((_, i) => i + 0.5).filter((_, i) => i % every === 0);
          },
          values: (_u: uPlot, splits: number[]) => splits.map((v) => names[Math.floor(v)] ?? ''),
          grid: { show: false },
        },
      ];
    }
    const [xAxis, ...rest] = o.axes ?? [];
    o.axes = [{ ...xAxis, grid: CELL_GRID }, ...rest];
    const onDraw = this.opts.onDraw;
    o.hooks = {
      ...o.hooks,
      drawClear: [(u: uPlot) => this.drawCells(u)],
      setCursor: [(u: uPlot) => this.describeCursor(u)],
      ...(onDraw === undefined ? {} : { draw: [() => onDraw()] }),
    };
    if (this.opts.plugins !== undefined) o.plugins = [...this.opts.plugins];
    return o;
  }

  private drawCells(u: uPlot): void {
    const d = this.current;
    if (d === undefined) return;
    const { left, top, width, height } = u.bbox;
    const cells = cellRects(d.grid, {
      xPos: (v) => u.valToPos(v, 'x', true),
      yPos: (v) => u.valToPos(v, 'y', true),
      left,
      width,
      ...(d.yLog ? { yFloor: logFloor(d.grid.lower, d.grid.upper), minHeight: 3 * devicePixelRatio } : {}),
    });
    const max = d.colorMax ?? gridMax(d.grid.values);
    const byLevel: (typeof cells)[] = Array.from({ length: LEVELS }, () => []);
    for (const c of cells) {
      const level = colorLevel(c.value, max, d.colors);
      if (level >= 0) byLevel[level]?.push(c);
    }
    const ctx = u.ctx;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    byLevel.forEach((list, level) => {
      if (list.length === 0) return;
      ctx.fillStyle = PALETTE[level] ?? '#000';
      for (const c of list) ctx.fillRect(c.x, c.y, c.w, c.h);
    });
    ctx.restore();
  }

  private describeCursor(u: uPlot): void {
    const d = this.current;
    const { left, top } = u.cursor;
    if (d === undefined || left === undefined || top === undefined || left < 0 || top < 0) {
      this.info.textContent = '\u00a0';
      return;
    }
    const col = colAt(u.posToVal(left, 'x'), d.grid.x, d.grid.step);
    const y = u.posToVal(top, 'y');
    const row = d.yLog ? rowAt(y, d.grid.lower, d.grid.upper) : Math.floor(y);
    const value = col < 0 || row < 0 ? undefined : d.grid.values[col]?.[row];
    if (row < 0 || row >= d.grid.lower.length) {
      this.info.textContent = '\u00a0';
      return;
    }
    const what = d.yLog
      ? `bucket ${formatValue(d.grid.lower[row], d.rowUnit)} – ${formatValue(d.grid.upper[row], d.rowUnit)}`
      : `CPU ${d.rowNames?.[row] ?? row}`;
    const t = d.grid.x[col];
    const when = t === undefined ? '' : `${this.frame.xMode === 'time' ? formatClock(t * 1000, true) : formatOffset(t)} · `;
    this.info.textContent = `${when}${what}: ${value === undefined || value === null ? 'no data' : formatValue(value, d.valueUnit)}`;
  }

  private renderLegend(d: GridData): void {
    const max = d.colorMax ?? gridMax(d.grid.values);
    this.legend.replaceChildren();
    const bar = document.createElement('span');
    bar.className = 'ramp';
    bar.style.background = `linear-gradient(to right, ${PALETTE.join(',')})`;
    const lo = document.createElement('span');
    lo.textContent = d.colors === 'log' ? formatValue(1, d.valueUnit) : formatValue(0, d.valueUnit);
    const hi = document.createElement('span');
    hi.textContent = `${formatValue(max, d.valueUnit)}${d.colors === 'log' ? ' (log)' : ''}`;
    this.legend.append(lo, bar, hi);
  }
}
