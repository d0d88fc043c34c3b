/**
 * Zooming a page of synced charts. A brush is reported by every chart of
 * the sync group (uPlot's setSelect hook fires on each), so the first report
 * of a drag is kept and applied once, in a microtask; a range already on
 * screen is ignored. A zoom is a new history entry (Back returns to the view
 * before it); a reset replaces the entry.
 */
import type { App } from './page.js';
import { formatRoute, type Route } from './route.js';
import type { ViewRange } from './view-range.js';

export interface BrushZoomOptions<R extends Route> {
  readonly app: App;
  readonly range: ViewRange;
  readonly route: () => R;
  readonly setRoute: (route: R) => void;
  /** the page is gone: drop a pending zoom */
  readonly gone: () => boolean;
  /** after the range changed: show it, reload the charts */
  readonly changed: () => void;
}

export class BrushZoom<R extends Route & { readonly from?: number; readonly to?: number }> {
  #pending: { start: number; end: number } | undefined;

  constructor(private readonly o: BrushZoomOptions<R>) {}

  zoom(start: number, end: number): void {
    if (this.#pending !== undefined) return;
    this.#pending = { start, end };
    queueMicrotask(() => {
      const pending = this.#pending;
      this.#pending = undefined;
      if (pending === undefined || this.o.gone()) return;
      const z = this.o.range.zoomTo(pending.start, pending.end);
      const current = this.o.route();
      const route = { ...current, from: z.start, to: z.end };
      if (formatRoute(route) === formatRoute(current)) return;
      this.o.setRoute(route);
      this.o.app.navigate(route);
      this.o.changed();
    });
  }

  reset(): void {
    if (!this.o.range.zoomed) return;
    this.o.range.reset();
    const { from: _f, to: _t, ...rest } = this.o.route();
    const route = rest as R;
    this.o.setRoute(route);
    this.o.app.navigate(route, true);
    this.o.changed();
  }
}
