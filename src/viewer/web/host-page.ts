/**
 * A host page (or two hosts side by side): the section menu (from
 * /api/v1/sections, so a new metric shows without viewer code), the charts of
 * the section for each host, one shared cursor and zoom. Brushing a chart
 * zooms every chart and refetches at its pixel width; live, the page follows
 * the newest data every second until zoomed. Charts load when they come into
 * view. The hosts' alert events in the range are markers on every chart and
 * a strip above them (alert-strip.ts).
 */
import type { MetricEntry, SaveRequest, SectionInfo, ViewInfo } from '../api.js';
import { AlertStrip } from './alert-strip.js';
import { apiGet } from './api-client.js';
import { cgroupPicker, CGROUP_LABEL } from './cgroup-picker.js';
import { ChartCard } from './chart-card.js';
import type { ChartFrame } from './chart-frame.js';
import { matchesFor, planCharts } from './chart-plan.js';
import { el, replace } from './dom.js';
import { clearError, clearErrors, reportError } from './error-line.js';
import { type App, isLive, type Page } from './page.js';
import { Poller } from './poller.js';
import { BrushZoom } from './brush-zoom.js';
import { LazyCards } from './lazy-cards.js';
import { formatRoute, type Route } from './route.js';
import { saveButton } from './save-button.js';
import { mergeSections } from './sections.js';
import { ViewRange } from './view-range.js';

type HostRoute = Extract<Route, { page: 'host' }>;

const ERRORS = 'host';

export class HostPage implements Page {
  private readonly abort = new AbortController();
  private readonly range: ViewRange;
  private readonly source: string;
  private readonly frame: ChartFrame;
  private readonly cards = new LazyCards<ChartCard>();
  private sections: SectionInfo[] = [];
  private readonly metrics = new Map<string, MetricEntry[]>();
  private cgroup = '';
  private section: string | undefined;
  private poller: Poller | undefined;
  private readonly resizer: ResizeObserver;
  private resizeQueued = false;
  private readonly nav = el('nav', { class: 'sections', 'aria-label': 'sections' });
  private readonly head = el('div', { class: 'section-head' });
  private readonly columns = el('div', { class: 'columns' });
  private tools: HTMLElement | undefined;
  private saving: HTMLElement | undefined;
  private readonly zoomer: BrushZoom<HostRoute>;
  private readonly alerts: AlertStrip;
  private readonly zoomButton = el('button', { type: 'button', class: 'reset-zoom', disabled: true, title: 'or double-click a chart' }, 'reset zoom');

  constructor(
    private readonly app: App,
    private readonly root: HTMLElement,
    private route: HostRoute,
  ) {
    const info = app.info;
    const src = info.sources[0];
    this.source = src?.name ?? 'live';
    const zoom = route.from !== undefined && route.to !== undefined ? { start: route.from, end: route.to } : undefined;
    this.range = new ViewRange({ start: src?.start ?? 0, end: src?.end ?? 0 }, isLive(info), zoom);
    this.frame = {
      xMode: 'time',
      xRange: () => {
        const v = this.range.visible();
        return [v.start / 1000, v.end / 1000];
      },
      syncKey: `host-page-${Math.random().toString(36).slice(2)}`,
      onZoom: (from, to) => this.zoomer.zoom(from * 1000, to * 1000),
      onReset: () => this.zoomer.reset(),
    };
    this.resizer = new ResizeObserver(() => this.queueResize());
    this.zoomer = new BrushZoom<HostRoute>({
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
        void this.alerts.load(this.range.visible());
      },
    });
    this.alerts = new AlertStrip({
      source: this.source,
      hosts: route.hosts,
      signal: this.abort.signal,
      errorKey: `${ERRORS}:alerts`,
      changed: () => {
        for (const c of this.cards.all) c.redrawMarks();
      },
      zoom: (from, to) => this.zoomer.zoom(from, to),
    });
    this.zoomButton.addEventListener('click', () => this.zoomer.reset());
    void this.start();
  }

  update(route: Route): boolean {
    if (route.page !== 'host' || route.hosts.join('\n') !== this.route.hosts.join('\n')) return false;
    if (formatRoute(route) === formatRoute(this.route)) return true;
    const sectionChanged = route.section !== this.route.section;
    this.route = route;
    if (route.from !== undefined && route.to !== undefined) this.range.zoomTo(route.from, route.to);
    else this.range.reset();
    if (sectionChanged) this.showSection(route.section);
    else void this.cards.reloadAll();
    void this.alerts.load(this.range.visible());
    this.showState();
    return true;
  }

  destroy(): void {
    this.abort.abort();
    this.poller?.stop();
    this.resizer.disconnect();
    this.cards.clear();
    clearErrors(ERRORS);
  }

  private async start(): Promise<void> {
    const hosts = this.route.hosts;
    const tools = el('div', { class: 'toolbar' }, el('a', { href: '#/fleet', class: 'back' }, '← fleet'), el('h2', { class: 'hosts' }, hosts.join(' · ')), this.zoomButton);
    this.tools = tools;
    this.offerSave();
    replace(this.root, el('div', { class: 'host-page' }, tools, el('div', { class: 'layout' }, this.nav, el('div', { class: 'content' }, this.alerts.root, this.head, this.columns))));
    this.resizer.observe(this.columns);
    this.showState();
    await this.loadHost();
  }

  /** Sections and metrics of the hosts, then the charts; live, tried again every second until it works (NATS back, the host's first frame). */
  private async loadHost(): Promise<void> {
    const hosts = this.route.hosts;
    try {
      const answers = await Promise.all(
        hosts.map(async (host) => {
          const [sections, metrics] = await Promise.all([
            apiGet<SectionInfo[]>('sections', { source: this.source, host }, this.abort.signal),
            apiGet<MetricEntry[]>('metrics', { source: this.source, host }, this.abort.signal),
          ]);
          return { host, sections, metrics };
        }),
      );
      this.sections = mergeSections(answers.map((a) => a.sections));
      for (const a of answers) this.metrics.set(a.host, a.metrics);
      clearError(`${ERRORS}:load`);
    } catch (error) {
      if (this.abort.signal.aborted) return;
      reportError(`${ERRORS}:load`, error);
      replace(this.columns, el('p', { class: 'muted' }, this.range.live ? 'Nothing to show yet: see the line above (trying again every second).' : 'Nothing to show: see the line above.'));
      if (this.range.live) setTimeout(() => void this.loadHost(), 1000);
      return;
    }
    this.showSection(this.route.section);
    void this.alerts.load(this.range.visible());
    if (this.range.live) this.poller = new Poller(() => this.tick()).start();
  }

  private showSection(name: string | undefined): void {
    const section = this.sections.find((s) => s.name === name) ?? this.sections[0];
    this.section = section?.name;
    replace(
      this.nav,
      ...this.sections.map((s) =>
        el(
          'a',
          {
            href: formatRoute({ ...this.route, section: s.name }),
            class: s.name === this.section ? 'current' : undefined,
            'aria-current': s.name === this.section ? 'page' : undefined,
          },
          s.name,
          el('span', { class: 'count' }, String(s.metrics.length)),
        ),
      ),
    );
    this.cards.clear();
    if (section === undefined) {
      replace(this.head, el('h2', {}, 'no metrics'));
      replace(this.columns, el('p', { class: 'muted' }, 'This host has no metrics in this source.'));
      return;
    }
    const sectionMetrics = (host: string) =>
      section.metrics.map((n) => this.metrics.get(host)?.find((m) => m.name === n)).filter((m): m is MetricEntry => m !== undefined);
    const all = this.route.hosts.flatMap(sectionMetrics);
    const picker = cgroupPicker(all, this.cgroup, (glob) => {
      this.cgroup = glob;
      void this.cards.reloadAll();
    });
    replace(this.head, el('h2', {}, section.name), picker);
    this.columns.className = `columns cols-${this.route.hosts.length}`;
    const charts: ChartCard[] = [];
    const hosts = this.route.hosts;
    if (hosts.length === 1) {
      const host = hosts[0] ?? '';
      const cards = sectionMetrics(host).flatMap((m) => planCharts(m).map((plan) => new ChartCard(m, plan, this.cardContext(host))));
      charts.push(...cards);
      replace(this.columns, el('div', { class: 'column', 'data-host': host }, el('div', { class: 'cards' }, ...cards.map((c) => c.root))));
    } else {
      // side by side: one row per chart, a placeholder where a host lacks it, so the rows line up
      const cells: HTMLElement[] = hosts.map((host) => el('h2', { class: 'column-host', 'data-host': host }, host));
      for (const name of section.metrics) {
        const entries = hosts.map((h) => this.metrics.get(h)?.find((m) => m.name === name));
        const kinds: string[] = [];
        for (const m of entries) for (const p of m === undefined ? [] : planCharts(m)) if (!kinds.includes(p.kind)) kinds.push(p.kind);
        for (const kind of kinds) {
          hosts.forEach((host, i) => {
            const m = entries[i];
            const plan = m === undefined ? undefined : planCharts(m).find((p) => p.kind === kind);
            if (m === undefined || plan === undefined) {
              cells.push(el('section', { class: 'card placeholder', 'data-metric': name, 'data-host': host }, el('h3', {}, name), el('p', { class: 'muted' }, `${host} has no ${name}${m === undefined ? '' : ` ${kind} chart`}`)));
              return;
            }
            const card = new ChartCard(m, plan, this.cardContext(host));
            card.root.dataset.host = host;
            charts.push(card);
            cells.push(card.root);
          });
        }
      }
      replace(this.columns, ...cells);
    }
    this.cards.set(charts);
  }

  private cardContext(host: string) {
    return {
      source: this.source,
      host,
      frame: this.frame,
      matches: (m: MetricEntry) => matchesFor(m, { [CGROUP_LABEL]: this.cgroup }),
      range: () => this.range.visible(),
      errorKey: ERRORS,
      alerts: () => this.alerts.marks(host),
    };
  }



  private showState(): void {
    this.zoomButton.disabled = !this.range.zoomed;
    const state = this.range.following ? 'following live' : this.range.live ? 'paused: zoomed in (reset zoom to follow live)' : this.range.zoomed ? 'zoomed in' : 'whole recording';
    this.app.header.setView({ range: this.range.visible(), state });
  }

  /** Live: the source's newest data, then the charts in view when following it. */
  private async tick(): Promise<void> {
    try {
      const info = await apiGet<ViewInfo>('info', {}, this.abort.signal);
      this.app.setInfo(info);
      this.offerSave();
      const src = info.sources.find((s) => s.name === this.source);
      if (src !== undefined) this.range.setExtent({ start: src.start, end: src.end });
      clearError(`${ERRORS}:info`);
    } catch (error) {
      reportError(`${ERRORS}:info`, error);
      return;
    }
    this.showState();
    await Promise.all([this.alerts.load(this.range.visible()), this.range.following ? this.cards.reloadAll() : undefined]);
  }

  /** The save button, once the source can save (a live viewer that has connected). */
  private offerSave(): void {
    if (this.saving !== undefined || this.tools === undefined || !this.app.info.canSave) return;
    this.saving = saveButton(() => this.saveRequest());
    this.tools.append(this.saving);
  }

  private saveRequest(): SaveRequest {
    const v = this.range.visible();
    return { hosts: [...this.route.hosts], start: Math.floor(v.start), end: Math.ceil(v.end) };
  }

  private queueResize(): void {
    if (this.resizeQueued) return;
    this.resizeQueued = true;
    requestAnimationFrame(() => {
      this.resizeQueued = false;
      this.cards.resizeAll();
    });
  }
}
