/** Frames of one small sampler for the source tests: encoded bytes, their subject and their descriptor. */
import { describe } from '../../src/frame/descriptor.js';
import { encodeFrame } from '../../src/frame/codec.js';
import type { EncodedDescriptor } from '../../src/frame/descriptor.js';
import { metricsSubject } from '../../src/bus/subjects.js';
import { NO_LABELS } from '../../src/metrics/point.js';
import type { MetricDecl } from '../../src/metrics/metric.js';

const LOAD: MetricDecl = { name: 'test_load', kind: 'gauge', unit: 'count', labels: [], description: 'a test gauge' };
export const SAMPLER = 'test_load';
export const DESCRIPTOR: EncodedDescriptor = describe(SAMPLER, [{ metric: LOAD, labels: NO_LABELS, value: 0 }]);

/** The frame `seq` of `host`, its value the seq. */
export function frameOf(host: string, seq: number): { subject: string; data: Uint8Array } {
  const ns = BigInt(seq) * 1_000_000_000n;
  return {
    subject: metricsSubject(host, SAMPLER),
    data: encodeFrame({ host, sampler: SAMPLER, instance: 1, seq, beginNs: ns, endNs: ns + 1n, descriptor: DESCRIPTOR.hash }, [seq]),
  };
}
