/**
 * Table sorting for the fleet page: by any column, numbers as numbers and text
 * in natural order (host2 before host10), unknown values (null) last in either
 * direction, ties kept in their order. Pure.
 */

export type SortValue = number | string | null | undefined;
export type SortDir = 'asc' | 'desc';

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/** -1, 0 or 1 between two known values: numbers before text, text in natural order. */
export function compareValues(a: SortValue, b: SortValue): number {
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1;
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return collator.compare(String(a ?? ''), String(b ?? ''));
}

function unknown(v: SortValue): boolean {
  return v === null || v === undefined || (typeof v === 'number' && Number.isNaN(v));
}

/** A sorted copy of `rows` by `key`; unknowns last whatever the direction; stable. */
export function sortRows<T>(rows: readonly T[], key: (row: T) => SortValue, dir: SortDir): T[] {
  const sign = dir === 'asc' ? 1 : -1;
  return rows
    .map((row, i) => ({ row, i, v: key(row) }))
    .sort((x, y) => {
      const ux = unknown(x.v);
      const uy = unknown(y.v);
      if (ux || uy) return ux === uy ? x.i - y.i : ux ? 1 : -1;
      return sign * compareValues(x.v, y.v) || x.i - y.i;
    })
    .map((e) => e.row);
}

/** The sort after a click on column `key`: the same column flips, a new one starts descending (numbers: biggest first) or ascending (text). */
export function nextSort(current: { key: string; dir: SortDir }, key: string, textColumn: boolean): { key: string; dir: SortDir } {
  if (current.key === key) return { key, dir: current.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: textColumn ? 'asc' : 'desc' };
}
