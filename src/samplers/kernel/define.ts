/**
 * The shape every BPF sampler shares: open its object with the agent's
 * options, report what did not attach as `degraded`, close the object on
 * close. A sampler supplies only its reader: what to take from the attached
 * object's maps on each refresh.
 */
import type { MetricDecl } from '../../metrics/metric.js';
import type { BpfObject } from '../../native/index.js';
import type { Reading, Sampler, SamplerContext, SamplerDefinition } from '../types.js';
import type { BpfLayout } from './layout.js';
import { openBpf, releaseBtf, type LoadedBpf } from './load.js';

export interface BpfSamplerSpec {
  readonly name: string;
  readonly description: string;
  readonly metrics: readonly MetricDecl[];
  readonly layout: BpfLayout;
  /** fills lookup tables the programs read, after load and before attach */
  readonly afterLoad?: (object: BpfObject) => void;
  /** builds the views once (label objects, mmapped maps) and returns the refresh */
  reader(bpf: LoadedBpf, ctx: SamplerContext): () => Reading;
}

export function defineBpfSampler(spec: BpfSamplerSpec): SamplerDefinition {
  return {
    name: spec.name,
    description: spec.description,
    metrics: spec.metrics,
    kernel: true,
    layouts: [spec.layout],
    async init(ctx: SamplerContext): Promise<Sampler> {
      let bpf: LoadedBpf | undefined;
      let read: () => Reading;
      try {
        bpf = openBpf(spec.layout, { sampler: spec.name, log: ctx.log, events: ctx.bpfEvents, afterLoad: spec.afterLoad });
        read = spec.reader(bpf, ctx);
      } catch (error) {
        bpf?.close();
        throw error;
      } finally {
        // the kernel's BTF is needed only while samplers start: do not keep ~6 MB of it
        releaseBtf();
      }
      const loaded = bpf;
      return {
        name: spec.name,
        metrics: spec.metrics,
        ...(loaded.degraded.length > 0 ? { degraded: loaded.degraded.join('; ') } : {}),
        async refresh(): Promise<Reading> {
          return read();
        },
        async close(): Promise<void> {
          loaded.close();
        },
      };
    },
  };
}
