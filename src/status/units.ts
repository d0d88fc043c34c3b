/** Ages, counts and times as `rezolus status` writes them. Pure. */

/**
 * An age or duration for people: `0.4s`, `12s`, `2m5s`, `14m`, `1h5m`,
 * `3d2h`. Tenths below 10 s, whole seconds below 10 minutes, then two units.
 */
export function formatAge(ms: number): string {
  if (!Number.isFinite(ms)) return '?';
  const t = Math.max(0, ms);
  if (t < 10_000) return `${(Math.floor(t / 100) / 10).toFixed(1)}s`;
  const s = Math.floor(t / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 === 0 ? `${m}m` : `${m}m${s % 60}s`;
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 === 0 ? `${h}h` : `${h}h${m % 60}m`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d}d` : `${d}d${h % 24}h`;
}

/** 1234567 -> `1,234,567`. */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Unix ms -> RFC 3339 UTC with milliseconds. */
export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** Unix ms -> RFC 3339 UTC to the second, for tables. */
export function isoSeconds(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d+Z$/, 'Z');
}

/** ms -> seconds with at most three decimals (JSON ages). */
export function seconds(ms: number): number {
  return Math.round(ms) / 1000;
}
