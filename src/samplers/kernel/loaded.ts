/**
 * The BPF objects this process has loaded, by sampler: what bpf_self reads
 * run counts and run times from. Samplers register on load and leave on close.
 */
import type { BpfObject } from '../../native/index.js';

const loaded = new Map<string, BpfObject>();

export function registerLoaded(sampler: string, object: BpfObject): void {
  loaded.set(sampler, object);
}

export function unregisterLoaded(sampler: string, object: BpfObject): void {
  if (loaded.get(sampler) === object) loaded.delete(sampler);
}

/** Sampler name → its loaded object, sorted by name. */
export function loadedObjects(): [string, BpfObject][] {
  return [...loaded.entries()].sort(([a], [b]) => a.localeCompare(b));
}
