/**
 * cpu_perf: per-CPU perf_event_open counters, system-wide. Software events
 * (cpu-clock, context switches, migrations, page faults) always; hardware
 * ones (cycles, instructions, cache and branch misses) when the host has a
 * PMU. Without one, perf_event_open(PERF_TYPE_HARDWARE) fails (ENOENT) and
 * the sampler runs degraded with the software part.
 */
import { readFileSync } from 'node:fs';
import { toCounter } from '../../../metrics/u64.js';
import { loadNative, type NativeAddon } from '../../../native/index.js';
import type { MetricDecl } from '../../../metrics/metric.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { SamplerUnsupportedError } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import * as m from './metrics.js';
import { hostCpuIdLimit } from '../../kernel/cpu-ids.js';

const NAME = 'cpu_perf';

const PERF_TYPE_HARDWARE = 0;
const PERF_TYPE_SOFTWARE = 1;

interface PerfEvent {
  readonly metric: MetricDecl;
  /** perf's name for it */
  readonly event: string;
  readonly type: number;
  readonly config: number;
}

/**
 * perf_sw_ids, in the groups they can share: cpu-clock is an hrtimer event
 * of its own PMU and counts nothing as a member of (or as the leader of) a
 * group of the other software events (measured here: members read 0), so it
 * is a group alone.
 */
const SOFTWARE_GROUPS: readonly (readonly PerfEvent[])[] = [
  [
    { metric: m.cpuPerfContextSwitches, event: 'context-switches', type: PERF_TYPE_SOFTWARE, config: 3 },
    { metric: m.cpuPerfMigrations, event: 'cpu-migrations', type: PERF_TYPE_SOFTWARE, config: 4 },
    { metric: m.cpuPerfPageFaults, event: 'page-faults', type: PERF_TYPE_SOFTWARE, config: 2 },
    { metric: m.cpuPerfPageFaultsMinor, event: 'minor-faults', type: PERF_TYPE_SOFTWARE, config: 5 },
    { metric: m.cpuPerfPageFaultsMajor, event: 'major-faults', type: PERF_TYPE_SOFTWARE, config: 6 },
  ],
  [{ metric: m.cpuPerfClock, event: 'cpu-clock', type: PERF_TYPE_SOFTWARE, config: 0 }],
];
const SOFTWARE_EVENTS = SOFTWARE_GROUPS.flat().length;

/** perf_hw_id; cycles first: it decides whether there is a PMU at all. */
const HARDWARE: readonly PerfEvent[] = [
  { metric: m.cpuCycles, event: 'cycles', type: PERF_TYPE_HARDWARE, config: 0 },
  { metric: m.cpuInstructions, event: 'instructions', type: PERF_TYPE_HARDWARE, config: 1 },
  { metric: m.cpuCacheMisses, event: 'cache-misses', type: PERF_TYPE_HARDWARE, config: 3 },
  { metric: m.cpuBranchMisses, event: 'branch-misses', type: PERF_TYPE_HARDWARE, config: 5 },
];

/** Errors of perf_event_open(PERF_TYPE_HARDWARE) that mean the host has no PMU for it. */
const NO_PMU = new Set(['ENOENT', 'EOPNOTSUPP', 'ENODEV']);

function errno(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' ? code : String((error as Error).message ?? error);
}

/** One opened counter: which metric, which CPU's label. */
interface Slot {
  readonly metric: MetricDecl;
  readonly labels: Labels;
}

/** The events of one kind (software or hardware) on one CPU, read with one read() of the leader. */
interface Group {
  readonly leader: number;
  /** members in the order they joined: the order of their values in a read */
  readonly slots: Slot[];
  /** the value each member last published */
  readonly last: (number | bigint | undefined)[];
}

interface OpenError {
  readonly event: string;
  readonly cpu: number;
  readonly code: string;
  readonly message: string;
}

/**
 * A counter's value from (value, enabled, running): scaled by enabled/running
 * when the counter was multiplexed; undefined when it never ran.
 */
export function scaled(value: bigint, enabled: bigint, running: bigint): number | bigint | undefined {
  if (running === 0n) return undefined;
  const v = running < enabled ? (value * enabled) / running : value;
  return toCounter(v);
}

/**
 * Counters opened as one group per CPU and kind: reading a CPU's group is
 * one syscall (and, for a CPU other than the reader's, one cross-CPU call)
 * instead of one per event.
 */
class Groups {
  readonly groups: Group[] = [];
  private readonly fds: number[] = [];
  constructor(private readonly native: NativeAddon) {}

  /** Opens `events` on `cpu` as a group, the first that opens leading; returns the events that failed. */
  open(events: readonly PerfEvent[], cpu: number, labels: Labels): OpenError[] {
    const failed: OpenError[] = [];
    let group: Group | undefined;
    for (const e of events) {
      try {
        const fd = this.native.perfOpen(e.type, e.config, cpu, -1, group?.leader ?? -1);
        this.fds.push(fd);
        if (group === undefined) {
          group = { leader: fd, slots: [], last: [] };
          this.groups.push(group);
        }
        group.slots.push({ metric: e.metric, labels });
      } catch (error) {
        failed.push({ event: e.event, cpu, code: errno(error), message: (error as Error).message });
      }
    }
    return failed;
  }

  get size(): number {
    return this.fds.length;
  }

  close(): void {
    for (const fd of this.fds.splice(0)) this.native.closeFd(fd);
    this.groups.length = 0;
  }
}

/** What lets a process count every task on a CPU, and this host's setting. */
function permissionHint(): string {
  let paranoid = '?';
  try {
    paranoid = readFileSync('/proc/sys/kernel/perf_event_paranoid', 'latin1').trim();
  } catch {
    // not readable: say what to check
  }
  return `system-wide counters need root or CAP_PERFMON, or kernel.perf_event_paranoid <= 0; it is ${paranoid} here`;
}

/** "event: cpu 0 EACCES, cpu 1 EACCES" per event. */
function describeErrors(errors: readonly OpenError[]): string[] {
  const byEvent = new Map<string, string[]>();
  for (const e of errors) byEvent.set(e.event, [...(byEvent.get(e.event) ?? []), `cpu ${e.cpu} ${e.code}`]);
  return [...byEvent].map(([event, cpus]) => `${event}: ${cpus.join(', ')}`);
}

export const cpuPerfSampler: SamplerDefinition = {
  name: NAME,
  description:
    'Per-CPU perf_event_open counters: context switches, migrations, page faults, cpu-clock; ' +
    'cycles, instructions, cache and branch misses when the host has a hardware PMU.',
  metrics: m.METRICS,
  kernel: true,
  // cycles, instructions and the software events per CPU: rates over 10 s by default
  defaultIntervalMs: 10_000,
  // perf events only: no BPF object
  layouts: [],
  async init(ctx: SamplerContext): Promise<Sampler> {
    let native: NativeAddon;
    try {
      native = loadNative();
    } catch (error) {
      throw new SamplerUnsupportedError((error as Error).message, { cause: error });
    }
    // ids, not a count: a possible-CPU list with gaps runs past the count
    const n = hostCpuIdLimit(native.numPossibleCpus);
    const labels = cpuLabels(n);
    const groups = new Groups(native);
    const degraded: string[] = [];

    // Software events decide which CPUs exist: a possible CPU that is offline
    // fails every open with ENODEV and is left out, silently.
    const softErrors: OpenError[] = [];
    const cpus: number[] = [];
    for (let cpu = 0; cpu < n; cpu++) {
      const failed = SOFTWARE_GROUPS.flatMap((group) => groups.open(group, cpu, labels[cpu]!));
      if (failed.length === SOFTWARE_EVENTS && failed.every((f) => f.code === 'ENODEV')) continue;
      cpus.push(cpu);
      softErrors.push(...failed);
    }
    if (cpus.length < n) ctx.log.info({ online: cpus }, 'possible CPUs that are offline are left out');
    degraded.push(...describeErrors(softErrors));
    if (groups.size === 0) {
      const first = softErrors[0];
      const hint = first?.code === 'EACCES' || first?.code === 'EPERM' ? ` (${permissionHint()})` : '';
      throw new SamplerUnsupportedError(`perf_event_open fails for every software event${first ? `: ${first.message}` : ''}${hint}`);
    }

    // Hardware events, in a group per CPU led by cycles: when cycles opens on
    // no CPU for want of a PMU, the sampler says so once and keeps the software part.
    const hardErrors: OpenError[] = [];
    for (const cpu of cpus) hardErrors.push(...groups.open(HARDWARE, cpu, labels[cpu]!));
    const cyclesErrors = hardErrors.filter((e) => e.event === 'cycles');
    if (cyclesErrors.length === cpus.length && NO_PMU.has(cyclesErrors[0]!.code)) {
      degraded.push(`unsupported: no hardware PMU (perf_event_open cycles: ${cyclesErrors[0]!.code}); software events only`);
    } else {
      degraded.push(...describeErrors(hardErrors));
    }
    if (degraded.length > 0) ctx.log.warn({ degraded }, 'cpu_perf runs without some of its counters');

    const all = groups.groups;
    const leaders = Int32Array.from(all.map((g) => g.leader));
    const width = 3 + Math.max(...all.map((g) => g.slots.length));
    const out = new BigUint64Array(all.length * width);
    return {
      name: NAME,
      metrics: m.METRICS,
      ...(degraded.length > 0 ? { degraded: degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const failed = native.perfRead(leaders, out, width);
        if (failed === leaders.length) throw new Error(`cpu_perf: every perf counter read failed (${failed})`);
        const points: Point[] = [];
        for (let g = 0; g < all.length; g++) {
          const base = g * width;
          const enabled = out[base + 1]!;
          const running = out[base + 2]!;
          const group = all[g]!;
          for (let j = 0; j < group.slots.length; j++) {
            // A failed read leaves zeros (running 0): the last value stands, so the series keep their places.
            // Scaled values of a multiplexed counter are estimates that may dip: never below the last one.
            const v = scaled(out[base + 3 + j]!, enabled, running);
            const prev = group.last[j];
            const value = v === undefined ? prev : prev === undefined || v > prev ? v : prev;
            if (value === undefined) continue; // never ran yet
            group.last[j] = value;
            points.push({ metric: group.slots[j]!.metric, labels: group.slots[j]!.labels, value });
          }
        }
        return { points, skipped: failed };
      },
      async close(): Promise<void> {
        groups.close();
      },
    };
  },
};
