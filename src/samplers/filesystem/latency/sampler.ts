import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { LAYOUT, SLOTS } from './maps.js';
import { filesystemLatency, METRICS } from './metrics.js';

const NAME = 'filesystem_latency';

export const filesystemLatencySampler: SamplerDefinition = {
  name: NAME,
  description:
    'ext4 fsync, unlink, truncate and fallocate and xfs truncate latency histograms (BPF, tp_btf enter/exit tracepoints ' +
    'of ext4 and xfs); read, write and open have no such tracepoints and are not measured.',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    // A histogram is published only when both of its programs are attached.
    const series = SLOTS.flatMap((s, i) =>
      s.programs.every((p) => bpf.attached.includes(p))
        ? [{ labels: Object.freeze({ fs: s.fs, op: s.op }) as Labels, latency: bpf.histogram('latency', i) }]
        : [],
    );
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh(): Promise<Reading> {
        const points: Point[] = series.map((s) => ({ metric: filesystemLatency, labels: s.labels, value: s.latency.read() }));
        return { points, skipped: 0 };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
