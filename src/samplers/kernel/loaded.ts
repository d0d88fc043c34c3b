/**
 * The BPF objects this process has loaded, by sampler: what rezolus_bpf reads
 * run counts and run times from. Samplers register on load and leave on close.
 */
import type { BpfObject } from '../../native/index.js';

const loaded = new Map<string, BpfObject>();
let sorted: readonly (readonly [string, BpfObject])[] = [];
let version = 0;

function changed(): void {
  // by code unit, not localeCompare: sampler names are ASCII, and a collator pages in ~3 MiB of ICU data
  sorted = [...loaded.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  version++;
}

export function registerLoaded(sampler: string, object: BpfObject): void {
  loaded.set(sampler, object);
  changed();
}

export function unregisterLoaded(sampler: string, object: BpfObject): void {
  if (loaded.get(sampler) !== object) return;
  loaded.delete(sampler);
  changed();
}

/** Sampler name → its loaded object, sorted by name; the same array until one loads or closes. */
export function loadedObjects(): readonly (readonly [string, BpfObject])[] {
  return sorted;
}

/** Goes up by one whenever an object loads or closes. */
export function loadedVersion(): number {
  return version;
}
