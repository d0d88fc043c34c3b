/**
 * rezolus_bpf: what the agent's own BPF programs cost, read from the kernel
 * (bpf_prog_info run_cnt and run_time_ns) for every object this process
 * loaded. The kernel counts only while BPF stats are enabled: with
 * [kernel] bpf_stats the sampler holds a BPF_ENABLE_STATS fd from init to
 * close; otherwise the figures stay zero unless sysctl
 * kernel.bpf_stats_enabled=1.
 */
import { readFileSync } from 'node:fs';
import type { BpfObject } from '../../../native/index.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { requireBpf } from '../../kernel/load.js';
import { loadedObjects, loadedVersion } from '../../kernel/loaded.js';
import { bpfRunCount, bpfRunTime, METRICS } from './metrics.js';

const NAME = 'rezolus_bpf';
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const STATS_SYSCTL = '/proc/sys/kernel/bpf_stats_enabled';

const counter = (v: bigint): number | bigint => (v <= SAFE ? Number(v) : v);

/** What to read from one loaded object: its attached programs' labels, in the order readRunStats writes them. */
interface ObjectPlan {
  readonly object: BpfObject;
  readonly labels: readonly Labels[];
}

/** Whether the kernel counts BPF run time now (a BPF_ENABLE_STATS fd anywhere, or the sysctl). */
function statsEnabled(): boolean {
  try {
    return readFileSync(STATS_SYSCTL, 'latin1').trim() !== '0';
  } catch {
    return true; // cannot tell: read the programs
  }
}

export const rezolusBpfSampler: SamplerDefinition = {
  name: NAME,
  description: 'Run count and run time of every BPF program the agent loaded, per sampler and program (bpf_prog_info).',
  metrics: METRICS,
  kernel: true,
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
        ctx.log.warn({ error: String(error) }, 'BPF stats stay off');
      }
    }
    let planVersion = -1;
    let plan: ObjectPlan[] = [];
    let out = new BigUint64Array(0);
    let last: Reading | undefined;
    /** The attached programs of every loaded object, with label objects made once per object load. */
    const replan = (): void => {
      plan = loadedObjects().map(([sampler, object]) => ({
        object,
        labels: object.programStats().filter((p) => p.attached).map((p) => Object.freeze({ sampler, program: p.name })),
      }));
      out = new BigUint64Array(2 * Math.max(1, ...plan.map((p) => p.labels.length)));
      planVersion = loadedVersion();
    };
    return {
      name: NAME,
      metrics: METRICS,
      ...(degraded !== undefined ? { degraded } : {}),
      async refresh(): Promise<Reading> {
        // While the kernel does not count, the figures cannot move: the last reading stands
        // (one read of a sysctl instead of a bpf syscall per program).
        if (planVersion === loadedVersion() && last !== undefined && statsFd < 0 && !statsEnabled()) {
          return { points: last.points, skipped: 0 };
        }
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
            points.push({ metric: bpfRunCount, labels: labels[i]!, value: counter(out[2 * i]!) });
            points.push({ metric: bpfRunTime, labels: labels[i]!, value: counter(out[2 * i + 1]!) });
          }
        }
        last = { points, skipped };
        return last;
      },
      async close(): Promise<void> {
        if (statsFd >= 0) native.closeFd(statsFd);
        statsFd = -1;
      },
    };
  },
};
