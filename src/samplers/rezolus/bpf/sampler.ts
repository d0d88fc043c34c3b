/**
 * rezolus_bpf: what the agent's own BPF programs cost, read from the kernel
 * (bpf_prog_info run_cnt and run_time_ns) for every object this process
 * loaded. The kernel counts only while BPF stats are enabled: with
 * [kernel] bpf_stats the sampler holds a BPF_ENABLE_STATS fd from init to
 * close; otherwise the figures stay zero unless sysctl
 * kernel.bpf_stats_enabled=1.
 */
import type { BpfObject } from '../../../native/index.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { requireBpf } from '../../kernel/load.js';
import { loadedObjects, loadedVersion } from '../../kernel/loaded.js';
import { toCounter } from '../../../metrics/u64.js';
import { bpfRunCount, bpfRunTime, METRICS } from './metrics.js';

const NAME = 'rezolus_bpf';

/** What to read from one loaded object: its attached programs' labels, in the order readRunStats writes them. */
interface ObjectPlan {
  readonly object: BpfObject;
  readonly labels: readonly Labels[];
}

export const rezolusBpfSampler: SamplerDefinition = {
  name: NAME,
  description: 'Run count and run time of every BPF program the agent loaded, per sampler and program (bpf_prog_info).',
  metrics: METRICS,
  kernel: true,
  // cumulative run counts and times of the agent's own programs: a self-check, read every 10 s
  defaultIntervalMs: 10_000,
  // loads no object of its own: reads the others' programs
  layouts: [],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const native = requireBpf();
    let statsFd = -1;
    let degraded: string | undefined;
    if (ctx.bpfStats === true) {
      try {
        statsFd = native.enableStats();
      } catch (error) {
        degraded = `cannot enable BPF run-time stats: ${(error as Error).message}`;
        ctx.log.warn({ err: error }, 'BPF stats stay off');
      }
    }
    let planVersion = -1;
    let plan: ObjectPlan[] = [];
    let out = new BigUint64Array(0);
    /** The attached programs of every loaded object, with label objects made once per object load. */
    const replan = (): void => {
      plan = loadedObjects().map(([sampler, object]) => ({
        object,
        // programs() makes no syscall, so it cannot skip one: the same attached programs, in the order readRunStats writes
        labels: object.programs().filter((p) => p.attached).map((p) => Object.freeze({ sampler, program: p.name })),
      }));
      out = new BigUint64Array(2 * Math.max(1, ...plan.map((p) => p.labels.length)));
      planVersion = loadedVersion();
    };
    return {
      name: NAME,
      metrics: METRICS,
      ...(degraded !== undefined ? { degraded } : {}),
      async refresh(): Promise<Reading> {
        // Every refresh reads every program: whether the kernel counts cannot be told cheaply
        // (kernel.bpf_stats_enabled shows the sysctl's own setting, not the BPF_ENABLE_STATS
        // fds other processes hold).
        if (planVersion !== loadedVersion()) replan();
        const points: Point[] = [];
        let skipped = 0;
        for (const { object, labels } of plan) {
          let n: number;
          try {
            n = object.readRunStats(out);
          } catch {
            skipped++; // closed between the listing and the read
            continue;
          }
          for (let i = 0; i < n && i < labels.length; i++) {
            points.push({ metric: bpfRunCount, labels: labels[i]!, value: toCounter(out[2 * i]!) });
            points.push({ metric: bpfRunTime, labels: labels[i]!, value: toCounter(out[2 * i + 1]!) });
          }
        }
        return { points, skipped };
      },
      async close(): Promise<void> {
        if (statsFd >= 0) native.closeFd(statsFd);
        statsFd = -1;
      },
    };
  },
};
