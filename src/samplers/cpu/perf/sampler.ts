/**
 * cpu_perf: per-CPU perf_event_open counters, system-wide. Software events
 * (cpu-clock, context switches, migrations, page faults) always; hardware
 * ones (cycles, instructions, cache and branch misses) when the host has a
 * PMU. Without one, perf_event_open(PERF_TYPE_HARDWARE) fails (ENOENT) and
 * the sampler runs degraded with the software part.
 */
import { loadNative, type NativeAddon } from '../../../native/index.js';
import type { MetricDecl } from '../../../metrics/metric.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { SamplerUnsupportedError } from '../../types.js';
import { cpuLabels } from '../../kernel/labels.js';
import * as m from './metrics.js';

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

/** perf_sw_ids */
const SOFTWARE: readonly PerfEvent[] = [
  { metric: m.cpuPerfClock, event: 'cpu-clock', type: PERF_TYPE_SOFTWARE, config: 0 },
  { metric: m.cpuPerfPageFaults, event: 'page-faults', type: PERF_TYPE_SOFTWARE, config: 2 },
  { metric: m.cpuPerfContextSwitches, event: 'context-switches', type: PERF_TYPE_SOFTWARE, config: 3 },
  { metric: m.cpuPerfMigrations, event: 'cpu-migrations', type: PERF_TYPE_SOFTWARE, config: 4 },
  { metric: m.cpuPerfPageFaultsMinor, event: 'minor-faults', type: PERF_TYPE_SOFTWARE, config: 5 },
  { metric: m.cpuPerfPageFaultsMajor, event: 'major-faults', type: PERF_TYPE_SOFTWARE, config: 6 },
];

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

const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * A counter's value from (value, enabled, running): scaled by enabled/running
 * when the counter was multiplexed; undefined when it never ran.
 */
export function scaled(value: bigint, enabled: bigint, running: bigint): number | bigint | undefined {
  if (running === 0n) return undefined;
  const v = running < enabled ? (value * enabled) / running : value;
  return v <= SAFE ? Number(v) : v;
}

class Opened {
  readonly fds: number[] = [];
  readonly slots: Slot[] = [];
  constructor(private readonly native: NativeAddon) {}

  /** Opens the event on every CPU in `cpus`; returns the errors by CPU, if any. */
  open(e: PerfEvent, cpus: readonly number[], labels: readonly Labels[]): { cpu: number; code: string; message: string }[] {
    const failed: { cpu: number; code: string; message: string }[] = [];
    for (const cpu of cpus) {
      try {
        this.fds.push(this.native.perfOpen(e.type, e.config, cpu, -1));
        this.slots.push({ metric: e.metric, labels: labels[cpu]! });
      } catch (error) {
        failed.push({ cpu, code: errno(error), message: (error as Error).message });
      }
    }
    return failed;
  }

  close(): void {
    for (const fd of this.fds.splice(0)) this.native.closeFd(fd);
    this.slots.length = 0;
  }
}

export const cpuPerfSampler: SamplerDefinition = {
  name: NAME,
  description:
    'Per-CPU perf_event_open counters: context switches, migrations, page faults, cpu-clock; ' +
    'cycles, instructions, cache and branch misses when the host has a hardware PMU.',
  metrics: m.METRICS,
  kernel: true,
  // perf events only: no BPF object
  layouts: [],
  async init(ctx: SamplerContext): Promise<Sampler> {
    let native: NativeAddon;
    try {
      native = loadNative();
    } catch (error) {
      throw new SamplerUnsupportedError((error as Error).message, { cause: error });
    }
    const n = native.numPossibleCpus;
    const labels = cpuLabels(n);
    const opened = new Opened(native);
    const degraded: string[] = [];

    // Software events decide which CPUs exist: a possible CPU that is offline
    // fails every open with ENODEV and is left out, silently.
    let cpus = Array.from({ length: n }, (_, i) => i);
    const softErrors = new Map<string, { cpu: number; code: string; message: string }[]>();
    for (const e of SOFTWARE) {
      const failed = opened.open(e, cpus, labels);
      if (failed.length > 0) softErrors.set(e.event, failed);
    }
    const offline = new Set(
      cpus.filter((c) => SOFTWARE.every((e) => softErrors.get(e.event)?.some((f) => f.cpu === c && f.code === 'ENODEV'))),
    );
    if (offline.size > 0) {
      ctx.log.info({ cpus: [...offline] }, 'possible CPUs that are offline are left out');
      cpus = cpus.filter((c) => !offline.has(c));
    }
    for (const [event, failed] of softErrors) {
      const real = failed.filter((f) => !offline.has(f.cpu));
      if (real.length > 0) degraded.push(`${event}: ${real.map((f) => `cpu ${f.cpu} ${f.code}`).join(', ')}`);
    }
    if (opened.fds.length === 0) {
      const first = [...softErrors.values()][0]?.[0];
      throw new SamplerUnsupportedError(`perf_event_open fails for every software event${first ? `: ${first.message}` : ''}`);
    }

    const [cycles, ...others] = HARDWARE;
    const cyclesFailed = opened.open(cycles!, cpus, labels);
    if (cyclesFailed.length === cpus.length && NO_PMU.has(cyclesFailed[0]!.code)) {
      degraded.push(`unsupported: no hardware PMU (perf_event_open cycles: ${cyclesFailed[0]!.code}); software events only`);
    } else {
      const hardErrors: string[] = [];
      if (cyclesFailed.length > 0) hardErrors.push(`cycles: ${cyclesFailed.map((f) => `cpu ${f.cpu} ${f.code}`).join(', ')}`);
      for (const e of others) {
        const failed = opened.open(e, cpus, labels);
        if (failed.length > 0) hardErrors.push(`${e.event}: ${failed.map((f) => `cpu ${f.cpu} ${f.code}`).join(', ')}`);
      }
      degraded.push(...hardErrors);
    }
    if (degraded.length > 0) ctx.log.warn({ degraded }, 'cpu_perf runs without some of its counters');

    const fds = Int32Array.from(opened.fds);
    const out = new BigUint64Array(fds.length * 3);
    const slots = opened.slots;
    return {
      name: NAME,
      metrics: m.METRICS,
      ...(degraded.length > 0 ? { degraded: degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const failed = native.perfRead(fds, out);
        if (failed === fds.length) throw new Error(`cpu_perf: every perf counter read failed (${failed})`);
        const points: Point[] = [];
        for (let i = 0; i < slots.length; i++) {
          // a failed read leaves zeros, which reads as "never ran": left out
          const v = scaled(out[3 * i]!, out[3 * i + 1]!, out[3 * i + 2]!);
          if (v === undefined) continue;
          const s = slots[i]!;
          points.push({ metric: s.metric, labels: s.labels, value: v });
        }
        return { points, skipped: failed };
      },
      async close(): Promise<void> {
        opened.close();
      },
    };
  },
};
