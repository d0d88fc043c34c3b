/**
 * The header: what this viewer shows (mode and source: file, NATS URL or
 * agent URL), the time range on screen and whether it follows live data.
 */
import type { ViewInfo, ViewMode } from '../api.js';
import { formatRange } from './clock.js';
import { byId, el, replace } from './dom.js';
import type { Span } from './view-range.js';

const MODE_NAMES: Readonly<Record<ViewMode, string>> = {
  live: 'live bus',
  file: 'recording',
  compare: 'A/B comparison',
  agent: 'live agent',
};

export interface ViewState {
  /** the range on screen: unix ms, or seconds-from-start ms in compare mode */
  readonly range?: Span;
  readonly offsets?: boolean;
  /** e.g. "following live", "paused: zoomed in" */
  readonly state: string;
}

export class Header {
  private readonly view: HTMLElement;

  constructor(readonly info: ViewInfo) {
    const sources = info.sources.map((s) =>
      el('span', { class: 'source', title: `${s.name}: ${s.location}` }, info.sources.length > 1 ? `${s.name}: ` : '', el('code', {}, s.location)),
    );
    this.view = el('span', { class: 'view-state' });
    replace(
      byId('header'),
      el('a', { class: 'brand', href: '#/' }, 'rezolus view'),
      el('span', { class: `mode mode-${info.mode}` }, MODE_NAMES[info.mode]),
      ...sources,
      this.view,
      el('span', { class: 'version muted' }, `v${info.version}`),
    );
    document.title = `rezolus view · ${info.sources.map((s) => s.location).join(' vs ')}`;
  }

  setView(v: ViewState): void {
    const range =
      v.range === undefined
        ? ''
        : v.offsets === true
          ? `+${Math.round(v.range.start / 1000)} s – +${Math.round(v.range.end / 1000)} s from each start`
          : formatRange(v.range.start, v.range.end);
    replace(this.view, range === '' ? '' : el('span', { class: 'range' }, range), el('span', { class: 'state' }, v.state));
  }
}
