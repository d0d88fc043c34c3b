/**
 * A host page's alert events (GET /api/v1/alerts for each host of the page,
 * over the range on screen): what the charts draw as markers, and a strip
 * above the charts listing them, newest first (time, host when two, rule,
 * state, value, summary), a click on one zooming to it. The strip is hidden
 * while the range has no event.
 */
import type { AlertMark, AlertsResult } from '../api.js';
import { STATE_COLORS, seriesText, stateBadge, valueLine } from './alert-marks.js';
import { apiGet } from './api-client.js';
import { formatClock } from './clock.js';
import { el, replace } from './dom.js';
import { clearError, reportError } from './error-line.js';
import type { Span } from './view-range.js';

/** Rows the strip lists at most (the newest). */
const ROWS = 200;
/** A click zooms to the alert's episode with this much around it at least (ms). */
const ZOOM_PAD_MS = 15_000;

export interface AlertStripOptions {
  readonly source: string;
  readonly hosts: readonly string[];
  readonly signal: AbortSignal;
  readonly errorKey: string;
  /** the events changed: the charts draw their markers again */
  readonly changed: () => void;
  /** a row was clicked: zoom to [from, to] (unix ms) */
  readonly zoom: (from: number, to: number) => void;
}

/** The range a click on `m` zooms to: its episode (from activeAt) with some time around it. */
export function zoomSpan(m: AlertMark): Span {
  const start = Math.min(m.activeAt, m.at);
  const pad = Math.max(ZOOM_PAD_MS, (m.at - start) / 4);
  return { start: start - pad, end: m.at + pad };
}

export class AlertStrip {
  readonly root = el('section', { class: 'alerts', hidden: true, 'aria-label': 'alerts' });
  private readonly byHost = new Map<string, readonly AlertMark[]>();
  private key = '';
  private seq = 0;

  constructor(private readonly o: AlertStripOptions) {}

  /** the events of `host` (the charts' markers) */
  marks(host: string): readonly AlertMark[] {
    return this.byHost.get(host) ?? [];
  }

  /** Fetches the events of the range; redraws the strip and the markers when they changed. */
  async load(range: Span): Promise<void> {
    const seq = ++this.seq;
    let answers: AlertsResult[];
    try {
      answers = await Promise.all(
        this.o.hosts.map((host) => apiGet<AlertsResult>('alerts', { source: this.o.source, host, from: Math.floor(range.start), to: Math.ceil(range.end) }, this.o.signal)),
      );
      clearError(this.o.errorKey);
    } catch (error) {
      if (!this.o.signal.aborted) reportError(this.o.errorKey, error);
      return;
    }
    if (seq !== this.seq || this.o.signal.aborted) return;
    const key = answers.map((a) => a.events.map((e) => `${e.at}:${e.rule}:${e.state}:${e.kind}`).join(',')).join('\n');
    if (key === this.key) return;
    this.key = key;
    this.o.hosts.forEach((host, i) => this.byHost.set(host, answers[i]?.events ?? []));
    this.render(answers.reduce((n, a) => n + (a.omitted ?? 0), 0));
    this.o.changed();
  }

  private render(omitted: number): void {
    const all = [...this.byHost.values()].flat().sort((a, b) => b.at - a.at);
    this.root.hidden = all.length === 0;
    if (all.length === 0) {
      replace(this.root);
      return;
    }
    const two = this.o.hosts.length > 1;
    const head = el(
      'h3',
      {},
      'Alerts',
      el('span', { class: 'muted' }, ` · ${all.length} event${all.length === 1 ? '' : 's'} in view; click one to zoom to it`),
    );
    const rows = all.slice(0, ROWS).map((m) => this.row(m, two));
    const more = all.length + omitted - rows.length;
    replace(
      this.root,
      head,
      el('div', { class: 'alert-list' }, el('table', {}, el('tbody', {}, ...rows))),
      more > 0 ? el('div', { class: 'muted' }, `${more} older not listed (zoom in to see them)`) : false,
    );
  }

  private row(m: AlertMark, withHost: boolean): HTMLTableRowElement {
    const state = m.kind === 'capture' ? 'capture' : (m.state ?? 'inactive');
    const color = m.kind === 'capture' ? '#4b6584' : STATE_COLORS[m.state ?? 'inactive'];
    const what = m.kind === 'capture' ? (m.error === undefined ? `incident file ${m.file ?? ''}` : `no incident file: ${m.error}`) : valueLine(m);
    const series = seriesText(m);
    const tr = el(
      'tr',
      { 'data-at': m.at, 'data-rule': m.rule, 'data-state': state, 'data-host': m.host, title: 'zoom to this alert' },
      el('td', { class: 'time' }, formatClock(m.at, false)),
      withHost ? el('td', {}, m.host) : false,
      el('td', { class: 'rule' }, m.rule, series === '' ? '' : el('span', { class: 'muted' }, ` ${series}`)),
      el('td', {}, stateBadge(state, color)),
      el('td', { class: 'value' }, what),
      el('td', { class: 'summary muted' }, m.summary),
    );
    tr.addEventListener('click', () => {
      const z = zoomSpan(m);
      this.o.zoom(z.start, z.end);
    });
    return tr;
  }
}
