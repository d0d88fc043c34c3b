/**
 * The page's address after `#`: which page, hosts, section and zoom, so a view
 * can be bookmarked and the back button works.
 *   #/                      the mode's first page
 *   #/fleet                 the fleet table
 *   #/host?h=web1&s=CPU     a host page; two h= side by side
 *   #/compare?a=h1&b=h2&s=  A/B comparison
 * from/to: the zoom (unix ms; ms from each source's start in compare mode). Pure.
 */

export interface Zoom {
  readonly from?: number;
  readonly to?: number;
}

export type Route =
  | { readonly page: 'home' }
  | { readonly page: 'fleet' }
  | ({ readonly page: 'host'; readonly hosts: readonly string[]; readonly section?: string } & Zoom)
  | ({ readonly page: 'compare'; readonly a?: string; readonly b?: string; readonly section?: string } & Zoom);

function num(v: string | null): number | undefined {
  if (v === null || v === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

function str(v: string | null): string | undefined {
  return v === null || v === '' ? undefined : v;
}

function zoom(q: URLSearchParams): Zoom {
  const from = num(q.get('from'));
  const to = num(q.get('to'));
  return from !== undefined && to !== undefined && to > from ? { from, to } : {};
}

export function parseRoute(hash: string): Route {
  const body = hash.replace(/^#/, '');
  const [path = '', query = ''] = body.split('?', 2);
  const q = new URLSearchParams(query);
  switch (path.replace(/\/+$/, '')) {
    case '/fleet':
      return { page: 'fleet' };
    case '/host': {
      const hosts = q.getAll('h').filter((h) => h !== '').slice(0, 2);
      if (hosts.length === 0) return { page: 'fleet' };
      const section = str(q.get('s'));
      return { page: 'host', hosts, ...(section === undefined ? {} : { section }), ...zoom(q) };
    }
    case '/compare': {
      const a = str(q.get('a'));
      const b = str(q.get('b'));
      const section = str(q.get('s'));
      return {
        page: 'compare',
        ...(a === undefined ? {} : { a }),
        ...(b === undefined ? {} : { b }),
        ...(section === undefined ? {} : { section }),
        ...zoom(q),
      };
    }
    default:
      return { page: 'home' };
  }
}

export function formatRoute(route: Route): string {
  const q = new URLSearchParams();
  const withZoom = (z: Zoom) => {
    if (z.from !== undefined && z.to !== undefined) {
      q.set('from', String(Math.round(z.from)));
      q.set('to', String(Math.round(z.to)));
    }
  };
  const tail = () => (q.size > 0 ? `?${q.toString()}` : '');
  switch (route.page) {
    case 'home':
      return '#/';
    case 'fleet':
      return '#/fleet';
    case 'host':
      for (const h of route.hosts) q.append('h', h);
      if (route.section !== undefined) q.set('s', route.section);
      withZoom(route);
      return `#/host${tail()}`;
    case 'compare':
      if (route.a !== undefined) q.set('a', route.a);
      if (route.b !== undefined) q.set('b', route.b);
      if (route.section !== undefined) q.set('s', route.section);
      withZoom(route);
      return `#/compare${tail()}`;
  }
}
