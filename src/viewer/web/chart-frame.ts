/**
 * What every chart on a page shares, as uPlot options: the x axis (wall time,
 * or seconds from the start in compare mode) and its range, the synced
 * cursor, the brush that zooms every chart, double-click to reset, and a y
 * axis in human units.
 */
import uPlot from 'uplot';
import { fitXLabels, logLabels } from './axis-ticks.js';
import { formatClock, timeTicks } from './clock.js';
import { axisIncrs, formatOffset, formatTick, OFFSET_INCRS } from './units.js';

export interface ChartFrame {
  /** `time`: x is unix seconds; `offset`: seconds from each source's start */
  readonly xMode: 'time' | 'offset';
  /** the x range every chart shows (seconds) */
  readonly xRange: () => [number, number];
  /** the cursor sync group of the page */
  readonly syncKey: string;
  /** a brush from x `from` to `to` (seconds) */
  readonly onZoom: (from: number, to: number) => void;
  readonly onReset: () => void;
}

export const Y_AXIS_SIZE = 76;
/** fixed padding (top, right, bottom, left): uPlot's automatic one moves the plotting area with the tick labels, and the width is the query budget */
const PAD_RIGHT = 24;
const PAD_LEFT = 4;
const PADDING: uPlot.Padding = [12, PAD_RIGHT, 0, PAD_LEFT];

/** The plotting area's width in CSS pixels of a chart `width` wide: what its queries ask for. */
export function plotWidthOf(width: number): number {
  return Math.max(50, Math.round(width - Y_AXIS_SIZE - PAD_RIGHT - PAD_LEFT));
}

/** Room per time tick: ranges up to 15 min may get HH:MM:SS labels, wider than HH:MM. */
const timeSpace = (_u: uPlot, _axis: number, min: number, max: number): number => (max - min <= 900 ? 62 : 42);

/** x labels that would run past the canvas's right edge are dropped, not cut off */
const fitted = (u: uPlot, splits: number[], labels: string[]): string[] =>
  fitXLabels(
    labels,
    splits.map((v) => u.valToPos(v, 'x')),
    u.bbox.width / devicePixelRatio + PAD_RIGHT,
  );

/** The x axis, cursor, brush and hooks of a chart on `frame`; the caller adds series, the y scale and axis. */
export function frameOptions(frame: ChartFrame, width: number, height: number): uPlot.Options {
  return {
    width,
    height,
    padding: PADDING,
    series: [
      {
        value: (_u: uPlot, v: number | null) =>
          v === null ? '—' : frame.xMode === 'time' ? formatClock(v * 1000, true) : formatOffset(v),
      },
    ],
    scales: {
      x: { time: frame.xMode === 'time', range: () => frame.xRange() },
    },
    axes: [
      frame.xMode === 'time'
        ? { space: timeSpace, values: (u: uPlot, splits: number[], _i: number, _space: number, incr: number) => fitted(u, splits, timeTicks(splits, incr)) }
        : { space: 50, incrs: [...OFFSET_INCRS], values: (u: uPlot, splits: number[]) => fitted(u, splits, splits.map((v) => formatOffset(v))) },
    ],
    cursor: {
      // a y crosshair synced by relative height would point at unrelated values on the other charts
      y: false,
      sync: { key: frame.syncKey, setSeries: false, scales: ['x', null] },
      drag: { x: true, y: false, setScale: false },
      bind: {
        dblclick: () => () => {
          frame.onReset();
          return null;
        },
      },
    },
    hooks: {
      setSelect: [
        (u: uPlot) => {
          const { left, width: w } = u.select;
          if (w < 3) return;
          const from = u.posToVal(left, 'x');
          const to = u.posToVal(left + w, 'x');
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          frame.onZoom(from, to);
        },
      ],
    },
  };
}

const isDecade = (v: number) => v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9;
/** a log axis draws grid lines and ticks at powers of ten only, not at every minor split */
const decades = (_u: uPlot, splits: number[]) => splits.map((v) => (isDecade(v) ? v : null));

/** A y axis whose ticks are in `unit` ('' for minor ticks a log axis leaves unlabelled). */
export function yAxis(unit: string, log = false, grid?: uPlot.Axis.Grid, space?: number): uPlot.Axis {
  const incrs = log ? undefined : axisIncrs(unit);
  return {
    size: Y_AXIS_SIZE,
    ...(space === undefined ? {} : { space }),
    values: (u: uPlot, splits: number[]) => {
      const labels = splits.map((v) => formatTick(v as number | null, unit));
      return log ? logLabels(splits, labels, u.bbox.height / devicePixelRatio) : labels;
    },
    ...(incrs === undefined ? {} : { incrs }),
    ...(log ? { grid: { filter: decades, ...grid }, ticks: { filter: decades } } : grid === undefined ? {} : { grid }),
  };
}

/** A linear y scale from zero (or below, for negative data) with some headroom. */
export function linearYScale(): uPlot.Scale {
  return {
    range: (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => {
      if (min === null || max === null || !Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
      const lo = Math.min(0, min);
      const hi = max > lo ? max : lo + 1;
      return uPlot.rangeNum(lo, hi, 0.1, true);
    },
  };
}

/** A linear y scale symmetric around zero (a difference): ±1 when all is zero. */
export function symmetricYScale(): uPlot.Scale {
  return {
    range: (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => {
      const m = Math.max(Math.abs(Number.isFinite(min) ? (min as number) : 0), Math.abs(Number.isFinite(max) ? (max as number) : 0));
      if (!(m > 0)) return [-1, 1];
      const [, hi] = uPlot.rangeNum(0, m, 0.1, true);
      return [-(hi ?? m), hi ?? m];
    },
  };
}

/** A base-10 log y scale over the data (positive values only). */
export function logYScale(): uPlot.Scale {
  return {
    distr: 3,
    log: 10,
    range: (_u: uPlot, min: number | null, max: number | null): uPlot.Range.MinMax => {
      if (min === null || max === null || !(min > 0) || !(max > 0)) return [1, 10];
      return uPlot.rangeLog(min, max === min ? min * 10 : max, 10, true);
    },
  };
}
