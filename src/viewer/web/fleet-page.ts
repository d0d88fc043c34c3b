/**
 * The fleet page: one row per host (CPU, run-queue p99, memory, network,
 * block IO, samplers, last frame age, buffered and refused frames; live, the
 * alerts firing), sortable by any column; a click opens the host, two
 * checked hosts open side by side.
 * Live, it refreshes every second.
 */
import type { HostSummary, SaveRequest, ViewInfo } from '../api.js';
import { apiGet } from './api-client.js';
import { el, replace } from './dom.js';
import { clearError, clearErrors, reportError } from './error-line.js';
import { ALERTS_COLUMN, alertsCell, type FleetColumn, type FleetColumnKey, type FleetRow, fleetColumns, fleetRow, STALE_MS } from './fleet-rows.js';
import { type App, isLive, type Page } from './page.js';
import { Poller } from './poller.js';
import { formatRoute, type Route } from './route.js';
import { saveButton } from './save-button.js';
import { nextSort, type SortDir, sortRows } from './sort.js';

const ERRORS = 'fleet';

type Column = FleetColumn | typeof ALERTS_COLUMN;

export class FleetPage implements Page {
  private readonly abort = new AbortController();
  private readonly source: string;
  private hosts: HostSummary[] = [];
  private sort: { key: string; dir: SortDir } = { key: 'host', dir: 'asc' };
  private readonly checked = new Set<string>();
  private poller: Poller | undefined;
  private readonly table = el('table', { class: 'fleet' });
  private readonly compare = el('button', { type: 'button', class: 'compare-hosts', disabled: true }, 'compare side by side');
  private readonly note = el('span', { class: 'muted' });
  private readonly tools: HTMLElement;
  private saving: HTMLElement | undefined;
  private sourceStart: number;
  private sourceEnd: number;

  constructor(
    private readonly app: App,
    root: HTMLElement,
  ) {
    const src = app.info.sources[0];
    this.source = src?.name ?? 'live';
    this.sourceStart = src?.start ?? Date.now();
    this.sourceEnd = src?.end ?? Date.now();
    this.compare.addEventListener('click', () => {
      const hosts = [...this.checked].slice(0, 2);
      if (hosts.length === 2) app.navigate({ page: 'host', hosts });
    });
    this.tools = el('div', { class: 'toolbar' }, el('h2', {}, 'Fleet'), this.compare, this.note);
    this.offerSave();
    replace(root, el('div', { class: 'fleet-page' }, this.tools, el('div', { class: 'table-wrap' }, this.table)));
    const range = src === undefined ? undefined : { start: src.start, end: src.end };
    app.header.setView({ ...(range === undefined ? {} : { range }), state: isLive(app.info) ? 'following live' : 'whole recording' });
    void this.refresh().then(() => {
      if (isLive(app.info) && !this.abort.signal.aborted) this.poller = new Poller(() => this.refresh()).start();
    });
  }

  update(route: Route): boolean {
    return route.page === 'fleet';
  }

  destroy(): void {
    this.abort.abort();
    this.poller?.stop();
    clearErrors(ERRORS);
  }

  private async refresh(): Promise<void> {
    try {
      const [hosts, info] = await Promise.all([
        apiGet<HostSummary[]>('hosts', { source: this.source }, this.abort.signal),
        isLive(this.app.info) ? apiGet<ViewInfo>('info', {}, this.abort.signal) : Promise.resolve(this.app.info),
      ]);
      this.hosts = hosts;
      if (info !== this.app.info) this.app.setInfo(info);
      this.offerSave();
      const src = info.sources.find((s) => s.name === this.source);
      if (src !== undefined) {
        this.sourceStart = src.start;
        this.sourceEnd = src.end;
        this.app.header.setView({ range: { start: src.start, end: src.end }, state: isLive(info) ? 'following live' : 'whole recording' });
      }
      clearError(ERRORS);
    } catch (error) {
      reportError(ERRORS, error);
      return;
    }
    this.render();
  }

  /** The save button, once the source can save (a live viewer that has connected). */
  private offerSave(): void {
    if (this.saving !== undefined || !this.app.info.canSave) return;
    this.saving = saveButton(() => this.saveRequest());
    this.tools.append(this.saving);
  }

  /** Frame age: from now when live, from the recording's end for a file. */
  private now(): number {
    return isLive(this.app.info) ? Date.now() : this.sourceEnd;
  }

  private render(): void {
    const now = this.now();
    const live = isLive(this.app.info);
    const base = fleetColumns(live);
    const alerts = new Map(this.hosts.filter((h) => h.alertsFiring !== undefined).map((h) => [h.host, alertsCell(h)]));
    const columns: readonly Column[] = alerts.size === 0 ? base : [base[0] as FleetColumn, ALERTS_COLUMN, ...base.slice(1)];
    if (!columns.some((c) => c.key === this.sort.key)) this.sort = { key: 'host', dir: 'asc' };
    const rows = sortRows(
      this.hosts.map((h) => fleetRow(h, now, live)),
      (r) => (this.sort.key === ALERTS_COLUMN.key ? (alerts.get(r.host)?.value ?? null) : r.values[this.sort.key as FleetColumnKey]),
      this.sort.dir,
    );
    for (const host of [...this.checked]) if (!this.hosts.some((h) => h.host === host)) this.checked.delete(host);
    const head = el(
      'tr',
      {},
      el('th', { class: 'pick', title: 'check two hosts to compare them side by side' }, ''),
      ...columns.map((c) => {
        const current = this.sort.key === c.key;
        const th = el(
          'th',
          { title: `${c.help}; click to sort`, 'data-key': c.key, 'aria-sort': current ? (this.sort.dir === 'asc' ? 'ascending' : 'descending') : undefined, class: current ? 'sorted' : undefined },
          c.title,
          current ? (this.sort.dir === 'asc' ? ' ▲' : ' ▼') : '',
        );
        th.addEventListener('click', () => {
          this.sort = nextSort(this.sort, c.key, c.text);
          this.render();
        });
        return th;
      }),
    );
    const empty = el('tr', {}, el('td', { colspan: columns.length + 1, class: 'muted' }, isLive(this.app.info) ? 'no host has sent a frame yet' : 'this source has no hosts'));
    replace(this.table, el('thead', {}, head), el('tbody', {}, ...(rows.length === 0 ? [empty] : rows.map((r) => this.row(r, columns, alerts.get(r.host))))));
    this.compare.disabled = this.checked.size !== 2;
    this.note.textContent = `${this.hosts.length} host${this.hosts.length === 1 ? '' : 's'}${this.checked.size > 0 ? ` · ${this.checked.size} checked` : ''}`;
  }

  private row(r: FleetRow, columns: readonly Column[], alerts: { value: number | null; text: string } | undefined): HTMLTableRowElement {
    const box = el('input', { type: 'checkbox', 'aria-label': `check ${r.host}`, checked: this.checked.has(r.host) });
    box.addEventListener('change', () => {
      if (box.checked) this.checked.add(r.host);
      else this.checked.delete(r.host);
      this.compare.disabled = this.checked.size !== 2;
      this.note.textContent = `${this.hosts.length} hosts · ${this.checked.size} checked`;
    });
    const href = formatRoute({ page: 'host', hosts: [r.host] });
    const tr = el(
      'tr',
      {
        'data-host': r.host,
        class: [(r.values.failed ?? 0) !== 0 ? 'has-failed' : '', r.stale ? 'stale' : ''].filter((c) => c !== '').join(' ') || undefined,
      },
      el('td', { class: 'pick' }, box),
      ...columns.map((c) => {
        if (c.key === ALERTS_COLUMN.key) {
          return el('td', { class: (alerts?.value ?? 0) > 0 ? 'num firing' : 'num', 'data-key': c.key }, alerts?.text ?? '—');
        }
        const title =
          c.key === 'failed' ? r.failedReasons : c.key === 'memUsed' ? r.memoryNote : c.key === 'active' ? r.samplersNote : c.key === 'age' && r.stale ? `no frame for more than ${STALE_MS / 1000} s` : undefined;
        const text = c.key === 'host' ? el('a', { href }, r.cells.host) : r.cells[c.key];
        const label = c.key === 'age' && r.stale ? el('span', { class: 'stale-label' }, 'stale') : false;
        return el('td', { class: c.text ? 'text' : 'num', 'data-key': c.key, title: title === '' ? undefined : title }, label, text);
      }),
    );
    tr.addEventListener('click', (e) => {
      const target = e.target as HTMLElement;
      if (target.closest('input, a') !== null) return;
      this.app.navigate({ page: 'host', hosts: [r.host] });
    });
    return tr;
  }

  private saveRequest(): SaveRequest {
    const hosts = this.checked.size > 0 ? [...this.checked] : this.hosts.map((h) => h.host);
    return { hosts, start: this.sourceStart, end: this.sourceEnd };
  }
}
