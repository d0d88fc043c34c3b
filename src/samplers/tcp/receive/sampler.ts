import type { Reading, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import { defineBpfSampler } from '../../kernel/define.js';
import { LAYOUT } from './maps.js';
import { METRICS, tcpJitter, tcpSrtt } from './metrics.js';

const NAME = 'tcp_receive';

export const tcpReceiveSampler: SamplerDefinition = defineBpfSampler({
  name: NAME,
  description: 'TCP smoothed RTT and RTT deviation histograms, sampled on received segments (BPF, tp_btf tcp_probe).',
  metrics: METRICS,
  layout: LAYOUT,
  reader(bpf) {
    const srtt = bpf.histogram('srtt');
    const jitter = bpf.histogram('jitter');
    return (): Reading => {
      return {
        points: [
          { metric: tcpSrtt, labels: NO_LABELS, value: srtt.read() },
          { metric: tcpJitter, labels: NO_LABELS, value: jitter.read() },
        ],
        skipped: 0,
      };
    };
  },
});
