import type { Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { openBpf } from '../../kernel/load.js';
import { LAYOUT } from './maps.js';
import { METRICS, tcpJitter, tcpSrtt } from './metrics.js';

const NAME = 'tcp_receive';

export const tcpReceiveSampler: SamplerDefinition = {
  name: NAME,
  description: 'TCP smoothed RTT and RTT deviation histograms, sampled on received segments (BPF, tp_btf tcp_probe).',
  metrics: METRICS,
  kernel: true,
  layouts: [LAYOUT],
  async init(ctx: SamplerContext): Promise<Sampler> {
    const bpf = openBpf(LAYOUT, { sampler: NAME, log: ctx.log, ...(ctx.bpfEvents ? { events: ctx.bpfEvents } : {}) });
    const srtt = bpf.histogram('srtt');
    const jitter = bpf.histogram('jitter');
    return {
      name: NAME,
      metrics: METRICS,
      ...(bpf.degraded.length > 0 ? { degraded: bpf.degraded.join('; ') } : {}),
      async refresh() {
        return {
          points: [
            { metric: tcpSrtt, labels: NO_LABELS, value: srtt.read() },
            { metric: tcpJitter, labels: NO_LABELS, value: jitter.read() },
          ],
          skipped: 0,
        };
      },
      async close(): Promise<void> {
        bpf.close();
      },
    };
  },
};
