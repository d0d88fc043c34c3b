/**
 * A/B comparison of two recordings: a host of each (pickers), the sections of
 * both, and for each metric a chart of A and B on one axis of seconds from
 * each recording's start, with the difference. Brushing zooms every chart to
 * the same offsets in both.
 */
import type { MetricEntry, SectionInfo, SourceInfo } from '../api.js';
import { apiGet } from './api-client.js';
import type { ChartFrame } from './chart-frame.js';
import { planCharts } from './chart-plan.js';
import { CompareCard, type CompareSide } from './compare-card.js';
import { el, replace } from './dom.js';
import { clearError, clearErrors, reportError } from './error-line.js';
import type { App, Page } from './page.js';
import { BrushZoom } from './brush-zoom.js';
import { LazyCards } from './lazy-cards.js';
import { formatRoute, type Route } from './route.js';
import { mergeSections } from './sections.js';
import { ViewRange } from './view-range.js';

type CompareRoute = Extract<Route, { page: 'compare' }>;

const ERRORS = 'compare';

export class ComparePage implements Page {
  private readonly abort = new AbortController();
  private readonly range: ViewRange;
  private readonly frame: ChartFrame;
  private readonly srcA: SourceInfo | undefined;
  private readonly srcB: SourceInfo | undefined;
  private readonly cards = new LazyCards<CompareCard>();
  private sections: SectionInfo[] = [];
  private metricsA: MetricEntry[] = [];
  private metricsB: MetricEntry[] = [];
  private readonly resizer: ResizeObserver;
  private readonly nav = el('nav', { class: 'sections', 'aria-label': 'sections' });
  private readonly head = el('div', { class: 'section-head' });
  private readonly list = el('div', { class: 'cards' });
  private readonly zoomer: BrushZoom<CompareRoute>;
  private readonly zoomButton = el('button', { type: 'button', class: 'reset-zoom', disabled: true, title: 'or double-click a chart' }, 'reset zoom');

  constructor(
    private readonly app: App,
    private readonly root: HTMLElement,
    private route: CompareRoute,
  ) {
    this.srcA = app.info.sources[0];
    this.srcB = app.info.sources[1];
    const span = (s: SourceInfo | undefined) => (s === undefined ? 0 : s.end - s.start);
    const zoom = route.from !== undefined && route.to !== undefined ? { start: route.from, end: route.to } : undefined;
    this.range = new ViewRange({ start: 0, end: Math.max(span(this.srcA), span(this.srcB), 1000) }, false, zoom);
    this.frame = {
      xMode: 'offset',
      xRange: () => {
        const v = this.range.visible();
        return [v.start / 1000, v.end / 1000];
      },
      syncKey: `compare-${Math.random().toString(36).slice(2)}`,
      onZoom: (from, to) => this.zoomer.zoom(from * 1000, to * 1000),
      onReset: () => this.zoomer.reset(),
    };
    this.resizer = new ResizeObserver(() => requestAnimationFrame(() => this.cards.resizeAll()));
    this.zoomer = new BrushZoom<CompareRoute>({
      app,
      range: this.range,
      route: () => this.route,
      setRoute: (r) => {
        this.route = r;
      },
      gone: () => this.abort.signal.aborted,
      changed: () => {
        this.showState();
        void this.cards.reloadAll();
      },
    });
    this.zoomButton.addEventListener('click', () => this.zoomer.reset());
    void this.start();
  }

  private hostA(): string {
    return this.route.a ?? this.srcA?.hosts[0] ?? '';
  }

  private hostB(): string {
    return this.route.b ?? this.srcB?.hosts[0] ?? '';
  }

  update(route: Route): boolean {
    if (route.page !== 'compare' || route.a !== this.route.a || route.b !== this.route.b) return false;
    if (formatRoute(route) === formatRoute(this.route)) return true;
    const sectionChanged = route.section !== this.route.section;
    this.route = route;
    if (route.from !== undefined && route.to !== undefined) this.range.zoomTo(route.from, route.to);
    else this.range.reset();
    if (sectionChanged) this.showSection();
    else void this.cards.reloadAll();
    this.showState();
    return true;
  }

  destroy(): void {
    this.abort.abort();
    this.resizer.disconnect();
    this.cards.clear();
    clearErrors(ERRORS);
  }

  private hostPicker(side: 'a' | 'b', src: SourceInfo | undefined, current: string): HTMLElement {
    const select = el('select', { 'aria-label': `host of ${src?.name ?? side}` });
    for (const h of src?.hosts ?? []) select.append(el('option', { value: h, selected: h === current }, h));
    select.addEventListener('change', () => this.app.navigate({ ...this.route, [side]: select.value }));
    return el('label', { class: 'side-pick' }, el('b', {}, `${src?.name ?? side.toUpperCase()} `), select);
  }

  private async start(): Promise<void> {
    const a = this.hostA();
    const b = this.hostB();
    replace(
      this.root,
      el(
        'div',
        { class: 'host-page compare-page' },
        el('div', { class: 'toolbar' }, el('h2', {}, 'Compare'), this.hostPicker('a', this.srcA, a), el('span', { class: 'muted' }, 'vs'), this.hostPicker('b', this.srcB, b), this.zoomButton),
        el('div', { class: 'layout' }, this.nav, el('div', { class: 'content' }, this.head, this.list)),
      ),
    );
    this.resizer.observe(this.list);
    this.showState();
    if (this.srcA === undefined || this.srcB === undefined) {
      reportError(`${ERRORS}:load`, new Error('compare mode needs two sources; /api/v1/info lists fewer'));
      return;
    }
    try {
      const [sa, sb, ma, mb] = await Promise.all([
        apiGet<SectionInfo[]>('sections', { source: this.srcA.name, host: a }, this.abort.signal),
        apiGet<SectionInfo[]>('sections', { source: this.srcB.name, host: b }, this.abort.signal),
        apiGet<MetricEntry[]>('metrics', { source: this.srcA.name, host: a }, this.abort.signal),
        apiGet<MetricEntry[]>('metrics', { source: this.srcB.name, host: b }, this.abort.signal),
      ]);
      this.sections = mergeSections([sa, sb]);
      this.metricsA = ma;
      this.metricsB = mb;
      clearError(`${ERRORS}:load`);
    } catch (error) {
      reportError(`${ERRORS}:load`, error);
      return;
    }
    this.showSection();
  }

  private showSection(): void {
    const section = this.sections.find((s) => s.name === this.route.section) ?? this.sections[0];
    replace(
      this.nav,
      ...this.sections.map((s) =>
        el(
          'a',
          { href: formatRoute({ ...this.route, section: s.name }), class: s.name === section?.name ? 'current' : undefined },
          s.name,
          el('span', { class: 'count' }, String(s.metrics.length)),
        ),
      ),
    );
    this.cards.clear();
    replace(this.head, el('h2', {}, section?.name ?? 'no metrics'));
    if (section === undefined || this.srcA === undefined || this.srcB === undefined) {
      replace(this.list);
      return;
    }
    const side = (name: string, src: SourceInfo, host: string, metrics: MetricEntry[], metric: string): CompareSide => ({
      name,
      source: src.name,
      host,
      origin: src.start,
      metric: metrics.find((m) => m.name === metric),
    });
    const charts: CompareCard[] = [];
    for (const name of section.metrics) {
      const a = side(this.srcA.name, this.srcA, this.hostA(), this.metricsA, name);
      const b = side(this.srcB.name, this.srcB, this.hostB(), this.metricsB, name);
      const entry = a.metric ?? b.metric;
      if (entry === undefined) continue;
      for (const plan of planCharts(entry)) charts.push(new CompareCard(entry, plan, a, b, { frame: this.frame, range: () => this.range.visible(), errorKey: ERRORS }));
    }
    replace(this.list, ...charts.map((c) => c.root));
    this.cards.set(charts);
  }



  private showState(): void {
    this.zoomButton.disabled = !this.range.zoomed;
    this.app.header.setView({ range: this.range.visible(), offsets: true, state: this.range.zoomed ? 'zoomed in' : 'whole recordings' });
  }
}
