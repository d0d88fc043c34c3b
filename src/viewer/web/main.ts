/**
 * The viewer's page: reads /api/v1/info, draws the header, and routes the
 * address after `#` (route.ts) to the fleet page, a host page (one or two
 * hosts) or the A/B comparison.
 */
import type { ViewInfo } from '../api.js';
import { apiGet } from './api-client.js';
import { ComparePage } from './compare-page.js';
import { byId, el, replace } from './dom.js';
import { clearError, reportError } from './error-line.js';
import { FleetPage } from './fleet-page.js';
import { Header } from './header.js';
import { HostPage } from './host-page.js';
import type { App, Page } from './page.js';
import { formatRoute, parseRoute, type Route } from './route.js';

/** The first page of a mode: the comparison, a recording's only host, else the fleet. */
function homeRoute(info: ViewInfo): Route {
  if (info.mode === 'compare') return { page: 'compare' };
  const hosts = info.sources[0]?.hosts ?? [];
  if (info.mode === 'file' && hosts.length === 1 && hosts[0] !== undefined) return { page: 'host', hosts: [hosts[0]] };
  return { page: 'fleet' };
}

async function boot(): Promise<void> {
  let info: ViewInfo;
  try {
    info = await apiGet<ViewInfo>('info', {});
  } catch (error) {
    replace(byId('header'), el('span', { class: 'brand' }, 'rezolus view'), el('span', { class: 'muted' }, 'no answer from the viewer server'));
    reportError('boot', error);
    return;
  }
  const header = new Header(info);
  const root = byId('app');
  let page: Page | undefined;

  const showProblem = (i: ViewInfo) => {
    if (i.problem === undefined) clearError('problem');
    else reportError('problem', new Error(i.problem));
  };
  showProblem(info);
  const app: App = {
    info,
    setInfo(next) {
      this.info = next;
      showProblem(next);
    },
    header,
    navigate(route, replaceEntry = false) {
      const hash = formatRoute(route);
      if (replaceEntry) history.replaceState(null, '', hash);
      else if (location.hash !== hash) location.hash = hash;
    },
  };

  const show = () => {
    let route = parseRoute(location.hash);
    // compare mode has only the comparison; the other modes have no comparison
    if (route.page === 'home' || (info.mode === 'compare') !== (route.page === 'compare')) {
      route = homeRoute(info);
      history.replaceState(null, '', formatRoute(route));
    }
    if (page?.update(route) === true) return;
    page?.destroy();
    window.scrollTo(0, 0);
    if (route.page === 'host') page = new HostPage(app, root, route);
    else if (route.page === 'compare') page = new ComparePage(app, root, route);
    else page = new FleetPage(app, root);
  };
  window.addEventListener('hashchange', show);
  show();
}

void boot();
