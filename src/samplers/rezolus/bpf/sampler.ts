/**
 * rezolus_bpf: what the agent's own BPF programs cost, read from the kernel
 * (bpf_prog_info run_cnt and run_time_ns) for every object this process
 * loaded. The kernel counts only while BPF stats are enabled: with
 * [kernel] bpf_stats the sampler holds a BPF_ENABLE_STATS fd from init to
 * close; otherwise the figures stay zero unless sysctl
 * kernel.bpf_stats_enabled=1.
 */
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { requireBpf } from '../../kernel/load.js';
import { loadedObjects } from '../../kernel/loaded.js';
import { bpfRunCount, bpfRunTime, METRICS } from './metrics.js';

const NAME = 'rezolus_bpf';
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

const counter = (v: bigint): number | bigint => (v <= SAFE ? Number(v) : v);

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
    // sampler → program → labels, created on first sight and reused
    const labels = new Map<string, Map<string, Labels>>();
    const labelsOf = (sampler: string, program: string): Labels => {
      let bySampler = labels.get(sampler);
      if (bySampler === undefined) labels.set(sampler, (bySampler = new Map()));
      let l = bySampler.get(program);
      if (l === undefined) bySampler.set(program, (l = Object.freeze({ sampler, program })));
      return l;
    };
    return {
      name: NAME,
      metrics: METRICS,
      ...(degraded !== undefined ? { degraded } : {}),
      async refresh(): Promise<Reading> {
        const points: Point[] = [];
        let skipped = 0;
        for (const [sampler, object] of loadedObjects()) {
          let stats;
          try {
            stats = object.programStats();
          } catch {
            skipped++; // closed between the listing and the read
            continue;
          }
          for (const p of stats) {
            if (!p.attached) continue;
            const l = labelsOf(sampler, p.name);
            points.push({ metric: bpfRunCount, labels: l, value: counter(p.runCount) });
            points.push({ metric: bpfRunTime, labels: l, value: counter(p.runTimeNs) });
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
