/**
 * How a BPF sampler's object looks, declared in TS beside the sampler and
 * checked against the compiled C by test/samplers/bpf-layout.test.ts: its
 * programs and the events they hook, and every map with its shape.
 */

/** Constants shared with bpf/include/*.h (H2_BUCKETS is the wire configuration's, metrics/histogram.ts). */
import { H2_BUCKETS } from '../../metrics/histogram.js';

export { H2_BUCKETS };
export const MAX_CPUS = 1024;
export const MAX_PID = 4_194_304;

export interface BpfProgramLayout {
  /** the C function name */
  readonly name: string;
  /** the tracepoint, attached as `tp_btf/<event>` (or `raw_tp/<event>` when `raw`) */
  readonly event: string;
  /** a raw_tp program: its arguments are plain integers (a pointer's address may be hashed), not BTF-typed */
  readonly raw?: boolean;
  /** the module that has the tracepoint when it is not built in (ext4, xfs): its BTF is searched after vmlinux's */
  readonly module?: string;
  /**
   * Set on variants of one tracepoint whose arguments changed between kernels
   * (tcp_retransmit_skb gained `err` in 6.13): the program loads only where
   * the tracepoint passes exactly this many arguments.
   */
  readonly args?: number;
}

export type BpfMapLayout =
  /** `count` h2 histograms back to back, mmapable, u64 buckets */
  | { readonly kind: 'histograms'; readonly count: number }
  /** a counter bank of `width` u64 per CPU, mmapable; sized to the possible CPUs at load */
  | { readonly kind: 'counters'; readonly width: number }
  /** a dense u64 array indexed by an id below `entries`, mmapable */
  | { readonly kind: 'packed'; readonly entries: number }
  /** bookkeeping indexed by pid; sized to pid_max at load */
  | { readonly kind: 'per-pid'; readonly valueSize: number }
  /** bookkeeping indexed by CPU; sized to the possible CPUs at load */
  | { readonly kind: 'per-cpu'; readonly valueSize: number }
  /** a hash map keyed by a kernel pointer (request, socket) */
  | { readonly kind: 'hash'; readonly keySize: number; readonly valueSize: number; readonly entries: number }
  /** a plain array: a lookup table filled from userspace before attach, or the programs' own bookkeeping */
  | { readonly kind: 'table'; readonly valueSize: number; readonly entries: number };

export interface BpfLayout {
  /** `bpf/<object>.bpf.c`, built to `build/bpf/<object>.bpf.o` */
  readonly object: string;
  readonly programs: readonly BpfProgramLayout[];
  readonly maps: Readonly<Record<string, BpfMapLayout>>;
}

/** The sizes the C declares (before userspace resizes anything), for the layout check. */
export function declaredShape(m: BpfMapLayout): { valueSize: number; maxEntries: number; mmapable: boolean; hash: boolean } {
  switch (m.kind) {
    case 'histograms':
      return { valueSize: 8, maxEntries: m.count * H2_BUCKETS, mmapable: true, hash: false };
    case 'counters':
      return { valueSize: 8, maxEntries: MAX_CPUS * m.width, mmapable: true, hash: false };
    case 'packed':
      return { valueSize: 8, maxEntries: m.entries, mmapable: true, hash: false };
    case 'per-pid':
      return { valueSize: m.valueSize, maxEntries: MAX_PID, mmapable: false, hash: false };
    case 'per-cpu':
      return { valueSize: m.valueSize, maxEntries: MAX_CPUS, mmapable: false, hash: false };
    case 'hash':
      return { valueSize: m.valueSize, maxEntries: m.entries, mmapable: false, hash: true };
    case 'table':
      return { valueSize: m.valueSize, maxEntries: m.entries, mmapable: false, hash: false };
  }
}
