/**
 * Per-CPU heatmaps: a query's series (one per CPU, and per other label such as
 * a CPU state) to a grid of rows = CPUs, the selected series of each CPU
 * summed. The other labels get a picker; a `state` label offers "busy" (all
 * but idle and iowait), its default. Pure.
 */
import type { QuerySeries } from '../api.js';

export const ALL = '*';
export const BUSY = 'busy';
/** the states that are not CPU work */
const IDLE_STATES = new Set(['idle', 'iowait']);

/** label -> the value picked: ALL, BUSY or one value */
export type Selection = Readonly<Record<string, string>>;

export interface PerCpuGrid {
  /** CPU ids, in numeric order: row r is cpus[r] */
  readonly cpus: string[];
  /** values[col][row] */
  readonly values: (number | null)[][];
}

/** The labels other than the CPU's and their values, in natural order. */
export function otherLabels(series: readonly Pick<QuerySeries, 'labels'>[], cpuKey: string): Map<string, string[]> {
  const found = new Map<string, Set<string>>();
  for (const s of series) {
    for (const [k, v] of Object.entries(s.labels)) {
      if (k === cpuKey) continue;
      let set = found.get(k);
      if (set === undefined) found.set(k, (set = new Set()));
      set.add(v);
    }
  }
  const collator = new Intl.Collator('en', { numeric: true });
  return new Map([...found].map(([k, set]) => [k, [...set].sort(collator.compare)]));
}

/** The picker's choices for a label: BUSY first when it has idle states, then ALL, then each value. */
export function choices(values: readonly string[]): string[] {
  const busy = values.some((v) => IDLE_STATES.has(v)) && values.some((v) => !IDLE_STATES.has(v));
  return [...(busy ? [BUSY] : []), ALL, ...values];
}

/** The default selection: the first choice of each label (BUSY where there is one, else ALL). */
export function defaultSelection(labels: ReadonlyMap<string, readonly string[]>): Selection {
  const out: Record<string, string> = {};
  for (const [k, values] of labels) out[k] = choices(values)[0] ?? ALL;
  return out;
}

/** Whether a series' labels pass the selection. */
export function selected(labels: Readonly<Record<string, string>>, selection: Selection): boolean {
  for (const [k, pick] of Object.entries(selection)) {
    const v = labels[k];
    if (pick === ALL || v === undefined) continue;
    if (pick === BUSY ? IDLE_STATES.has(v) : v !== pick) return false;
  }
  return true;
}

/** The grid: for each column and CPU, the sum of the selected series' avg (null when none has a value). */
export function perCpuGrid(series: readonly QuerySeries[], cpuKey: string, selection: Selection, columns: number): PerCpuGrid {
  const rows = new Map<string, (number | null)[]>();
  for (const s of series) {
    const cpu = s.labels[cpuKey];
    if (cpu === undefined || !selected(s.labels, selection)) continue;
    let row = rows.get(cpu);
    if (row === undefined) rows.set(cpu, (row = new Array(columns).fill(null)));
    for (let c = 0; c < columns; c++) {
      const v = s.avg[c];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      row[c] = (row[c] ?? 0) + v;
    }
  }
  const collator = new Intl.Collator('en', { numeric: true });
  const cpus = [...rows.keys()].sort(collator.compare);
  const values: (number | null)[][] = [];
  for (let c = 0; c < columns; c++) values.push(cpus.map((cpu) => rows.get(cpu)?.[c] ?? null));
  return { cpus, values };
}
