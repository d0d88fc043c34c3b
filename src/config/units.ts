/** Parses durations like `100ms`, `1s`, `1.5s`, `15m`, `2h`, `1d` into milliseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)(us|ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  const unit: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const ms = n * (unit[m[2] as string] as number);
  return Number.isFinite(ms) ? ms : undefined;
}

/** Formats milliseconds the way the config files write them. */
export function formatDuration(ms: number): string {
  const units: [string, number][] = [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000], ['s', 1000]];
  for (const [u, f] of units) if (ms >= f && ms % f === 0) return `${ms / f}${u}`;
  return `${ms}ms`;
}

/** Parses sizes like `64MiB`, `1GiB`, `500MB`, `4096` (bytes); undefined when malformed. */
export function parseSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(B|KiB|MiB|GiB|TiB|KB|MB|GB|TB)?$/.exec(text.trim());
  if (!m) return undefined;
  const unit: Record<string, number> = {
    B: 1, KiB: 1024, MiB: 1024 ** 2, GiB: 1024 ** 3, TiB: 1024 ** 4, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12,
  };
  const bytes = Math.floor(Number(m[1]) * (unit[m[2] ?? 'B'] as number));
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** Formats a byte count for people: `512 B`, `3.4 KiB`, `12.0 MiB`, `1.50 GiB`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const [unit, f] = bytes < 1024 ** 2 ? ['KiB', 1024] : bytes < 1024 ** 3 ? ['MiB', 1024 ** 2] : ['GiB', 1024 ** 3];
  const v = bytes / (f as number);
  return `${v.toFixed(v < 10 && unit === 'GiB' ? 2 : 1)} ${unit as string}`;
}

/** Parses `HOST:PORT` (`[::1]:4242` for IPv6); undefined when malformed. */
export function parseListen(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return { host: m[1] ?? (m[2] === '' ? '0.0.0.0' : (m[2] as string)), port };
}

const NATS_URL = /^(?:(?:nats|tls|ws|wss):\/\/)?(?:[^\s:/@,]+(?::[^\s@,]*)?@)?(?:\[[0-9a-fA-F:]+\]|[A-Za-z0-9._-]+)(?::\d{1,5})?$/;

/** Splits and checks a NATS URL list (`nats://h1:4222,nats://h2:4222`); undefined when empty or malformed. */
export function parseNatsUrls(text: string): string[] | undefined {
  const urls = text.split(',').map((u) => u.trim());
  if (urls.length === 0 || urls.some((u) => !NATS_URL.test(u))) return undefined;
  return urls;
}

/** A host selection's entries (hostsProblem says what makes one malformed); undefined when malformed. */
export function parseHosts(text: string): string[] | undefined {
  return hostsProblem(text) === undefined ? text.split(',').map((h) => h.trim()) : undefined;
}

/**
 * What is wrong with a host selection, or undefined when it is one: `*`
 * alone (the fleet), or host names and globs separated by commas, `*` the
 * only wildcard (a `?` or `[0-9]` would otherwise become part of the name
 * and match no host, silently).
 */
export function hostsProblem(text: string): string | undefined {
  const hosts = text.split(',').map((h) => h.trim());
  if (hosts.length === 1 && hosts[0] === '*') return undefined;
  if (hosts.length === 1 && hosts[0] === '') return 'it is empty';
  if (hosts.includes('')) return 'it has an empty entry (two commas together, or one at an end)';
  // `*` alone selects the fleet and cannot be mixed; inside a name it is a glob (`web-*`)
  if (hosts.includes('*')) return '"*" selects every host and cannot be listed with other entries';
  const spaced = hosts.find((h) => /[ \t]/.test(h));
  if (spaced !== undefined) return `"${spaced}" has a space: separate entries with commas`;
  const wild = hosts.find((h) => /[>?[\]{}!]/.test(h));
  if (wild !== undefined) return `"${wild}" has ${JSON.stringify(/[>?[\]{}!]/.exec(wild)?.[0])}: "*" is the only wildcard (web-*)`;
  return undefined;
}
