/**
 * One chart of a metric on a host page: its title (the description on hover),
 * the query for the range on screen at the chart's pixel width, and the chart
 * its plan asks for (lines, percentiles, bucket heatmap, per-CPU heatmap with
 * pickers for its other labels). A newer load supersedes an older one.
 */
import type { AlertMark, MetricEntry, QueryResult } from '../api.js';
import { AlertLayer } from './alert-marks.js';
import { apiGet, apiUrl, isAbort } from './api-client.js';
import type { ChartFrame } from './chart-frame.js';
import { plotWidthOf } from './chart-frame.js';
import { GridChart } from './chart-grid.js';
import { LineChart } from './chart-line.js';
import { type ChartPlan, cpuLabelOf } from './chart-plan.js';
import { type ChartRecord, countDraw, registerChart, unregisterChart } from './chart-registry.js';
import { el, replace } from './dom.js';
import { clearError, reportError } from './error-line.js';
import { choices, defaultSelection, otherLabels, perCpuGrid, type Selection } from './percpu.js';
import { lineChartData } from './series-shape.js';
import { axisLabel } from './units.js';
import type { Span } from './view-range.js';

export interface CardContext {
  readonly source: string;
  readonly host: string;
  readonly frame: ChartFrame;
  /** the page's label filters as `label=glob` for this metric (the cgroup picker) */
  readonly matches: (m: MetricEntry) => string[];
  /** the time range to show, unix ms */
  readonly range: () => Span;
  /** prefix of this page's error keys */
  readonly errorKey: string;
  /** the host's alert events, drawn as markers (absent: none) */
  readonly alerts?: () => readonly AlertMark[];
}

const LINE_HEIGHT = 180;
const HEATMAP_HEIGHT = 200;

export class ChartCard {
  readonly root: HTMLElement;
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private readonly pickers: HTMLElement;
  private readonly record: ChartRecord;
  private line: LineChart | undefined;
  private grid: GridChart | undefined;
  private abort: AbortController | undefined;
  private seq = 0;
  private result: QueryResult | undefined;
  private selection: Selection | undefined;
  private readonly layer: AlertLayer | undefined;
  /** loaded for the current range (false: load when it comes into view) */
  fresh = false;

  constructor(
    readonly metric: MetricEntry,
    readonly plan: ChartPlan,
    private readonly ctx: CardContext,
  ) {
    const unit = plan.fn === 'rate' ? `${metric.unit}/s` : metric.unit;
    const label = axisLabel(plan.kind === 'heatmap' ? metric.unit : unit);
    this.body = el('div', { class: 'chart' });
    this.status = el('div', { class: 'status' }, 'loading…');
    this.pickers = el('div', { class: 'pickers' });
    this.root = el(
      'section',
      { class: `card card-${plan.kind}`, 'data-metric': metric.name, 'data-kind': plan.kind },
      el(
        'h3',
        { title: metric.description === '' ? metric.name : `${metric.name}: ${metric.description}` },
        metric.name,
        el('span', { class: 'caption' }, ` ${plan.caption}${label === '' ? '' : ` · ${label}`}`),
      ),
      this.pickers,
      this.body,
      this.status,
    );
    this.record = registerChart({ source: ctx.source, host: ctx.host, metric: metric.name, fn: plan.fn, kind: plan.kind });
    if (ctx.alerts !== undefined) {
      this.layer = new AlertLayer(ctx.alerts, (drawn) => {
        this.record.marks = drawn;
      });
    }
  }

  private plugins() {
    return this.layer === undefined ? undefined : [this.layer.plugin()];
  }

  /** Draws the alert markers again (the host's events changed). */
  redrawMarks(): void {
    this.line?.redraw();
    this.grid?.redraw();
  }

  private width(): number {
    return Math.max(200, Math.floor(this.body.clientWidth || this.root.clientWidth || 600));
  }

  private budget(): number {
    const plot = this.line?.plotWidth() ?? this.grid?.plotWidth();
    return plot ?? plotWidthOf(this.width());
  }

  /** Fetches the range on screen and draws it. */
  async load(): Promise<void> {
    const seq = ++this.seq;
    this.abort?.abort();
    const abort = new AbortController();
    this.abort = abort;
    const { start, end } = this.ctx.range();
    const params = {
      source: this.ctx.source,
      host: this.ctx.host,
      metric: this.metric.name,
      fn: this.plan.fn,
      start: Math.floor(start),
      end: Math.ceil(end),
      budget: this.budget(),
      match: this.ctx.matches(this.metric),
    };
    const key = `${this.ctx.errorKey}:${this.record.id}`;
    try {
      const result = await apiGet<QueryResult>('query', params, abort.signal);
      if (seq !== this.seq) return;
      this.record.url = apiUrl('query', params);
      this.record.result = result;
      this.result = result;
      this.fresh = true;
      clearError(key);
      this.draw();
      this.record.width = this.line?.plotWidth() ?? this.grid?.plotWidth();
    } catch (error) {
      if (isAbort(error) || seq !== this.seq) return;
      reportError(key, error);
      this.status.textContent = error instanceof Error ? error.message : String(error);
      this.status.className = 'status bad';
    }
  }

  /** Redraws at the current width (a resized page). */
  resize(): void {
    this.line?.resize(this.width());
    this.grid?.resize(this.width());
  }

  destroy(): void {
    this.seq++;
    this.abort?.abort();
    this.line?.destroy();
    this.grid?.destroy();
    unregisterChart(this.record);
  }

  private draw(): void {
    const r = this.result;
    if (r === undefined) return;
    const empty = r.t.length === 0 || (r.series.length === 0 && (r.heatmap?.lower.length ?? 0) === 0);
    this.status.className = 'status';
    this.status.textContent = empty ? 'no samples in this range' : '';
    const onDraw = () => countDraw(this.record);
    switch (this.plan.kind) {
      case 'rate':
      case 'value':
      case 'percentiles': {
        this.line ??= new LineChart(this.body, this.ctx.frame, { unit: r.unit, log: this.plan.kind === 'percentiles', height: LINE_HEIGHT, onDraw, plugins: this.plugins() });
        this.line.set(lineChartData(r, this.plan.kind), this.width());
        this.record.data = this.line.data;
        return;
      }
      case 'heatmap': {
        const h = r.heatmap ?? { lower: [], upper: [], counts: [] };
        this.grid ??= new GridChart(this.body, this.ctx.frame, { height: HEATMAP_HEIGHT, onDraw, plugins: this.plugins() });
        this.grid.set(
          {
            grid: { x: r.t.map((t) => t / 1000), step: r.step / 1000, lower: h.lower, upper: h.upper, values: h.counts },
            yLog: true,
            rowUnit: this.metric.unit,
            valueUnit: 'events',
            colors: 'log',
          },
          this.width(),
        );
        this.record.data = this.grid.data;
        return;
      }
      case 'percpu': {
        const cpuKey = cpuLabelOf(this.metric.labels) ?? 'id';
        this.renderPickers(r, cpuKey);
        const g = perCpuGrid(r.series, cpuKey, this.selection ?? {}, r.t.length);
        const height = Math.max(120, Math.min(420, g.cpus.length * 10 + 40));
        if (this.grid === undefined) this.grid = new GridChart(this.body, this.ctx.frame, { height, onDraw, plugins: this.plugins() });
        this.grid.set(
          {
            grid: {
              x: r.t.map((t) => t / 1000),
              step: r.step / 1000,
              lower: g.cpus.map((_, i) => i),
              upper: g.cpus.map((_, i) => i + 1),
              values: g.values,
            },
            yLog: false,
            rowNames: g.cpus,
            rowUnit: '',
            valueUnit: r.unit,
            colors: 'linear',
          },
          this.width(),
        );
        this.record.data = { ...this.grid.data, selection: this.selection };
        return;
      }
    }
  }

  /** The per-CPU chart's other labels (state, kind, direction) as pickers; kept across reloads. */
  private renderPickers(r: QueryResult, cpuKey: string): void {
    const labels = otherLabels(r.series, cpuKey);
    if (labels.size === 0) return;
    const defaults = defaultSelection(labels);
    const prev = this.selection ?? {};
    const selection: Record<string, string> = {};
    for (const [k, values] of labels) {
      const picked = prev[k];
      selection[k] = picked !== undefined && choices(values).includes(picked) ? picked : (defaults[k] ?? '*');
    }
    const same = this.selection !== undefined && JSON.stringify(this.selection) === JSON.stringify(selection) && this.pickers.childElementCount > 0;
    this.selection = selection;
    if (same && this.pickers.dataset.values === JSON.stringify([...labels])) return;
    this.pickers.dataset.values = JSON.stringify([...labels]);
    replace(
      this.pickers,
      ...[...labels].map(([k, values]) => {
        const select = el('select', { 'data-label': k, title: `sum the CPUs' series of this ${k}` });
        for (const c of choices(values)) {
          const text = c === '*' ? 'all (sum)' : c === 'busy' ? 'busy (all but idle, iowait)' : c;
          select.append(el('option', { value: c, selected: c === selection[k] }, text));
        }
        select.addEventListener('change', () => {
          this.selection = { ...this.selection, [k]: select.value };
          this.draw();
        });
        return el('label', {}, `${k} `, select);
      }),
    );
  }
}
