/**
 * One chart of a metric in A/B comparison: both sources queried for the same
 * offsets from their starts at the chart's pixel width, drawn on one axis of
 * seconds from the start (A solid, B dashed) with A − B in a small chart under
 * it; heatmaps as an A and a B heatmap on that axis.
 */
import type { MetricEntry, QueryResult } from '../api.js';
import { apiGet, apiUrl, isAbort } from './api-client.js';
import type { ChartFrame } from './chart-frame.js';
import { plotWidthOf } from './chart-frame.js';
import { GridChart, type GridData } from './chart-grid.js';
import { LineChart } from './chart-line.js';
import { type ChartPlan, cpuLabelOf } from './chart-plan.js';
import { type ChartRecord, countDraw, registerChart, unregisterChart } from './chart-registry.js';
import { sourceRange } from './compare-align.js';
import { compareLines } from './compare-shape.js';
import { el } from './dom.js';
import { gridMax } from './heatmap-colors.js';
import { clearError, reportError } from './error-line.js';
import { defaultSelection, otherLabels, perCpuGrid } from './percpu.js';
import { axisLabel } from './units.js';
import type { Span } from './view-range.js';

export interface CompareSide {
  readonly name: string;
  readonly source: string;
  readonly host: string;
  /** the source's first sample, unix ms: offset 0 */
  readonly origin: number;
  /** the metric as this side knows it (undefined: this side lacks it) */
  readonly metric: MetricEntry | undefined;
}

export interface CompareContext {
  readonly frame: ChartFrame;
  /** the offsets on screen, ms from each start */
  readonly range: () => Span;
  readonly errorKey: string;
}

const EMPTY: QueryResult = { metric: '', fn: 'value', unit: '', start: 0, end: 0, step: 1000, t: [], series: [] };

export class CompareCard {
  readonly root: HTMLElement;
  private readonly body = el('div', { class: 'chart' });
  private readonly diffBody = el('div', { class: 'chart diff' });
  private readonly status = el('div', { class: 'status' }, 'loading…');
  private readonly record: ChartRecord;
  private main: LineChart | undefined;
  private diff: LineChart | undefined;
  private grids: GridChart[] = [];
  private abort: AbortController | undefined;
  private seq = 0;
  fresh = false;

  constructor(
    readonly metric: MetricEntry,
    readonly plan: ChartPlan,
    private readonly a: CompareSide,
    private readonly b: CompareSide,
    private readonly ctx: CompareContext,
  ) {
    const unit = plan.fn === 'rate' ? `${metric.unit}/s` : metric.unit;
    const label = axisLabel(plan.kind === 'heatmap' ? metric.unit : unit);
    const lines = plan.kind === 'rate' || plan.kind === 'value' || plan.kind === 'percentiles';
    this.root = el(
      'section',
      { class: `card card-${plan.kind} compare`, 'data-metric': metric.name, 'data-kind': plan.kind },
      el(
        'h3',
        { title: metric.description === '' ? metric.name : `${metric.name}: ${metric.description}` },
        metric.name,
        el('span', { class: 'caption' }, ` ${lines ? `${a.name} solid, ${b.name} dashed; below: ${a.name} − ${b.name}` : `${a.name} above, ${b.name} below`}${label === '' ? '' : ` · ${label}`}`),
      ),
      this.body,
      lines ? el('div', { class: 'diff-label muted' }, `${a.name} − ${b.name}`) : null,
      lines ? this.diffBody : null,
      this.status,
    );
    this.record = registerChart({ source: `${a.source}|${b.source}`, host: `${a.host}|${b.host}`, metric: metric.name, fn: plan.fn, kind: plan.kind });
  }

  private width(): number {
    return Math.max(200, Math.floor(this.body.clientWidth || this.root.clientWidth || 600));
  }

  private query(side: CompareSide, signal: AbortSignal): Promise<{ url: string; result: QueryResult }> {
    if (side.metric === undefined) return Promise.resolve({ url: '', result: EMPTY });
    const v = this.ctx.range();
    const r = sourceRange(side.origin, v.start / 1000, v.end / 1000);
    const params = {
      source: side.source,
      host: side.host,
      metric: this.metric.name,
      fn: this.plan.fn,
      start: r.start,
      end: r.end,
      budget: this.main?.plotWidth() ?? this.grids[0]?.plotWidth() ?? plotWidthOf(this.width()),
    };
    return apiGet<QueryResult>('query', params, signal).then((result) => ({ url: apiUrl('query', params), result }));
  }

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    const key = `${this.ctx.errorKey}:${this.record.id}`;
    try {
      const [ra, rb] = await Promise.all([this.query(this.a, abort.signal), this.query(this.b, abort.signal)]);
      if (seq !== this.seq) return;
      this.record.url = `${ra.url} ${rb.url}`;
      this.record.result = ra.result;
      this.fresh = true;
      clearError(key);
      this.draw(ra.result, rb.result);
      this.record.width = this.main?.plotWidth() ?? this.grid0Width();
    } catch (error) {
      if (isAbort(error) || seq !== this.seq) return;
      reportError(key, error);
      this.status.className = 'status bad';
      this.status.textContent = error instanceof Error ? error.message : String(error);
    }
  }

  private grid0Width(): number | undefined {
    return this.grids[0]?.plotWidth();
  }

  resize(): void {
    const w = this.width();
    this.main?.resize(w);
    this.diff?.resize(w);
    for (const g of this.grids) g.resize(w);
  }

  destroy(): void {
    this.seq++;
    this.abort?.abort();
    this.main?.destroy();
    this.diff?.destroy();
    for (const g of this.grids) g.destroy();
    unregisterChart(this.record);
  }

  private draw(ra: QueryResult, rb: QueryResult): void {
    const onDraw = () => countDraw(this.record);
    const empty = ra.t.length === 0 && rb.t.length === 0;
    this.status.className = 'status';
    this.status.textContent = empty ? 'no samples in this range' : missing(this.a, this.b);
    const w = this.width();
    if (this.plan.kind === 'heatmap' || this.plan.kind === 'percpu') {
      const sides = [
        { side: this.a, r: ra },
        { side: this.b, r: rb },
      ];
      if (this.grids.length === 0) {
        for (const { side } of sides) {
          const holder = el('div', { class: 'side' }, el('div', { class: 'side-label' }, `${side.name}: ${side.host}`));
          this.body.append(holder);
          this.grids.push(new GridChart(holder, this.ctx.frame, { height: this.plan.kind === 'heatmap' ? 170 : 150, onDraw }));
        }
      }
      // one colour scale for both: the same colour is the same value
      const grids = sides.map(({ side, r }) => this.gridData(side, r));
      const colorMax = Math.max(...grids.map((g) => gridMax(g.grid.values)));
      const drawn = grids.map((g, i) => {
        const data = { ...g, colorMax };
        this.grids[i]?.set(data, w);
        return data;
      });
      this.record.data = { a: drawn[0], b: drawn[1] };
      return;
    }
    const shaped = compareLines(ra, this.a.origin, rb, this.b.origin, { a: this.a.name, b: this.b.name });
    this.main ??= new LineChart(this.body, this.ctx.frame, { unit: ra.unit || rb.unit, log: this.plan.kind === 'percentiles', height: 180, onDraw });
    this.diff ??= new LineChart(this.diffBody, this.ctx.frame, { unit: ra.unit || rb.unit, log: false, diff: true, height: 140 });
    this.main.set(shaped.main, w);
    this.diff.set(shaped.diff, w);
    this.record.data = { main: this.main.data, diff: this.diff.data, a: ra, b: rb };
  }

  private gridData(side: CompareSide, r: QueryResult): GridData {
    const x = r.t.map((t) => (t - side.origin) / 1000);
    if (this.plan.kind === 'heatmap') {
      const h = r.heatmap ?? { lower: [], upper: [], counts: [] };
      return { grid: { x, step: r.step / 1000, lower: h.lower, upper: h.upper, values: h.counts }, yLog: true, rowUnit: this.metric.unit, valueUnit: 'events', colors: 'log' };
    }
    const cpuKey = cpuLabelOf(this.metric.labels) ?? 'id';
    const g = perCpuGrid(r.series, cpuKey, defaultSelection(otherLabels(r.series, cpuKey)), r.t.length);
    return {
      grid: { x, step: r.step / 1000, lower: g.cpus.map((_, i) => i), upper: g.cpus.map((_, i) => i + 1), values: g.values },
      yLog: false,
      rowNames: g.cpus,
      rowUnit: '',
      valueUnit: r.unit,
      colors: 'linear',
    };
  }
}

function missing(a: CompareSide, b: CompareSide): string {
  if (a.metric === undefined) return `${a.name} has no ${b.metric?.name ?? 'such metric'}`;
  if (b.metric === undefined) return `${b.name} has no ${a.metric.name}`;
  return '';
}
