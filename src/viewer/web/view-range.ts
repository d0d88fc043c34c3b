/**
 * The time range a page shows: the source's extent (a file's whole span, or
 * the live window, which moves), and a zoom inside it. Live and not zoomed,
 * the view follows the newest data; a zoom holds still until it is reset.
 * Times are ms: unix ms, or ms from each source's start in compare mode. Pure.
 */

export interface Span {
  readonly start: number;
  readonly end: number;
}

/** the narrowest zoom: a brush narrower than this is widened around its middle */
export const MIN_ZOOM_MS = 1000;

export class ViewRange {
  private extentSpan: Span;
  private zoomSpan: Span | undefined;

  constructor(
    extent: Span,
    readonly live: boolean,
    zoom?: Span,
  ) {
    this.extentSpan = extent;
    this.zoomSpan = zoom === undefined ? undefined : this.clamp(zoom);
  }

  get extent(): Span {
    return this.extentSpan;
  }

  get zoomed(): boolean {
    return this.zoomSpan !== undefined;
  }

  /** following the newest data: live and not zoomed */
  get following(): boolean {
    return this.live && this.zoomSpan === undefined;
  }

  /** what the charts show */
  visible(): Span {
    return this.zoomSpan ?? this.extentSpan;
  }

  /** the source's span now (live: the window moved on) */
  setExtent(extent: Span): void {
    this.extentSpan = extent;
  }

  /** zooms to [start, end] (either order), kept inside the extent and at least MIN_ZOOM_MS wide */
  zoomTo(start: number, end: number): Span {
    this.zoomSpan = this.clamp({ start: Math.min(start, end), end: Math.max(start, end) });
    return this.zoomSpan;
  }

  reset(): void {
    this.zoomSpan = undefined;
  }

  private clamp(z: Span): Span {
    const e = this.extentSpan;
    let { start, end } = z;
    if (end - start < MIN_ZOOM_MS) {
      const mid = (start + end) / 2;
      start = mid - MIN_ZOOM_MS / 2;
      end = mid + MIN_ZOOM_MS / 2;
    }
    // a live window moves: a zoom that has left it is kept rather than emptied
    if (!this.live) {
      const width = Math.min(end - start, e.end - e.start);
      if (start < e.start) {
        start = e.start;
        end = start + width;
      }
      if (end > e.end) {
        end = e.end;
        start = end - width;
      }
    }
    return { start, end };
  }
}
