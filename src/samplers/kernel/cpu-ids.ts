/**
 * How many CPU ids a BPF counter bank must hold. Our programs index banks
 * (and the copies of striped per-cgroup counters) by
 * bpf_get_smp_processor_id(), which runs up to the highest possible CPU id;
 * libbpf's count of possible CPUs is less than that when the ids have gaps
 * (`0,2` or `0-3,6-7`), and a bank sized by the count would drop the high
 * CPUs' counts.
 */
import { readFileSync } from 'node:fs';
import { parseCpuList } from '../cpu/cores/parse.js';

const POSSIBLE = '/sys/devices/system/cpu/possible';

/** One past the highest CPU id of a sysfs CPU list, and never less than `count`; `count` when the text is not a list. */
export function cpuIdLimit(possible: string | undefined, count: number): number {
  const ids = possible === undefined ? undefined : parseCpuList(possible);
  if (ids === undefined || ids.length === 0) return count;
  return Math.max(count, Math.max(...ids) + 1);
}

let cached: number | undefined;

/** cpuIdLimit of this host's possible CPUs (read once), with libbpf's count as the floor. */
export function hostCpuIdLimit(count: number): number {
  if (cached === undefined) {
    let text: string | undefined;
    try {
      text = readFileSync(POSSIBLE, 'latin1');
    } catch {
      text = undefined;
    }
    cached = cpuIdLimit(text, count);
  }
  return cached;
}
