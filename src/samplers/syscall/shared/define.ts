/**
 * defineBpfSampler's shape for the two syscall samplers, which share one BPF
 * object (hub.ts): a sampler acquires its role at init, reads its own maps
 * on each refresh and releases the role on close.
 */
import type { MetricDecl } from '../../../metrics/metric.js';
import type { Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import type { LoadedBpf } from '../../kernel/load.js';
import { acquireSyscallBpf, type SyscallBpfHandle, type SyscallRole } from './hub.js';
import { LAYOUT } from './maps.js';

export interface SyscallSamplerSpec {
  readonly name: SyscallRole;
  readonly description: string;
  readonly metrics: readonly MetricDecl[];
  /** builds the views once and returns the refresh (`handle` sets the role's own globals) */
  reader(bpf: LoadedBpf, ctx: SamplerContext, handle: SyscallBpfHandle): () => Reading;
}

export function defineSyscallSampler(spec: SyscallSamplerSpec): SamplerDefinition {
  return {
    name: spec.name,
    description: spec.description,
    metrics: spec.metrics,
    kernel: true,
    layouts: [LAYOUT],
    async init(ctx: SamplerContext): Promise<Sampler> {
      const handle = acquireSyscallBpf(spec.name, ctx);
      let read: () => Reading;
      try {
        read = spec.reader(handle.bpf, ctx, handle);
      } catch (error) {
        handle.release();
        throw error;
      }
      return {
        name: spec.name,
        metrics: spec.metrics,
        ...(handle.degraded !== undefined ? { degraded: handle.degraded } : {}),
        async refresh(): Promise<Reading> {
          return read();
        },
        async close(): Promise<void> {
          handle.release();
        },
      };
    },
  };
}
