/** What the router holds of a page, and what a page gets from the app. */
import type { ViewInfo } from '../api.js';
import type { Header } from './header.js';
import type { Route } from './route.js';

export interface Page {
  /** takes a new route in place (true), or leaves it to the router to build a new page (false) */
  update(route: Route): boolean;
  destroy(): void;
}

export interface App {
  /** the latest /api/v1/info (live pages read it again every second) */
  info: ViewInfo;
  /** takes a newer /api/v1/info: its `problem` (NATS away, the agent refusing) is the error line's until it clears */
  setInfo(info: ViewInfo): void;
  readonly header: Header;
  /** goes to a route: a new history entry, or `replace` the current one without rebuilding the page */
  navigate(route: Route, replace?: boolean): void;
}

/** Live and agent sources change under the page: it polls them every second. */
export function isLive(info: ViewInfo): boolean {
  return info.mode === 'live' || info.mode === 'agent';
}
