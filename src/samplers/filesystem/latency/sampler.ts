import type { Labels, Point, Reading, SamplerDefinition } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT, SLOTS } from './maps.js';
import { filesystemLatency, METRICS } from './metrics.js';

const NAME = 'filesystem_latency';

export const filesystemLatencySampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description:
    'ext4 fsync, unlink, truncate and fallocate and xfs truncate latency histograms (BPF, tp_btf enter/exit tracepoints ' +
    'of ext4 and xfs); read, write and open have no such tracepoints and are not measured.',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    // A histogram is published only when both of its programs are attached.
    const series = SLOTS.flatMap((s, i) =>
      s.programs.every((p) => bpf.attached.includes(p))
        ? [{ labels: Object.freeze({ fs: s.fs, op: s.op }) as Labels, latency: bpf.histogram('latency', i) }]
        : [],
    );
    return (): Reading => {
      const points: Point[] = series.map((s) => ({ metric: filesystemLatency, labels: s.labels, value: s.latency.read() }));
      return { points, skipped: 0 };
    };
  },
});
