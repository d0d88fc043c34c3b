import type { Logger } from 'pino';
import type { MetricDecl } from '../metrics/metric.js';
import type { BpfLayout } from './kernel/layout.js';
import type { AgentIntrospection } from './rezolus/introspection.js';

// the metric vocabulary a sampler reads into (metrics/point.ts), re-exported for the samplers
export { NO_LABELS, type Labels, type Point, type Value } from '../metrics/point.js';
import type { Point } from '../metrics/point.js';

/** What one refresh of a sampler produced. */
export interface Reading {
  readonly points: Point[];
  /** lines or entries of the source that could not be parsed and were left out */
  readonly skipped: number;
}

/** Where the sampler reads from; tests point these at `test/fixtures/rootfs`. */
export interface SamplerContext {
  /** the procfs root, `/proc` on a live host */
  readonly procRoot: string;
  /** the sysfs root, `/sys` on a live host */
  readonly sysRoot: string;
  readonly log: Logger;
  /** the agent's own figures, for the rezolus_self sampler (rezolus/introspection.ts) */
  readonly agent?: AgentIntrospection;
  /**
   * BPF program name → the tracepoint to attach it to instead of its own.
   * Tests name a tracepoint that does not exist to force a program's failure.
   */
  readonly bpfEvents?: Readonly<Record<string, string>>;
  /** keep BPF run-time statistics on while the agent runs ([kernel] bpf_stats) */
  readonly bpfStats?: boolean;
  /** [kernel] syscall_timing_budget: syscalls a second per CPU and class that syscall_latency times one by one (0: every syscall) */
  readonly syscallTimingBudget?: number;
  /** [cgroups] in agent.toml: the cardinality bound of container telemetry */
  readonly cgroups?: { readonly maxCgroups: number; readonly maxDepth: number; readonly openFiles?: number };
}

/**
 * Thrown by `init` when the sampler cannot work on this host (missing file,
 * unsupported kernel feature, no root for BPF). The agent reports the sampler
 * as unsupported with this reason and goes on without it.
 */
export class SamplerUnsupportedError extends Error {
  override readonly name = 'SamplerUnsupportedError';
  readonly code = 'SAMPLER_UNSUPPORTED';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

export interface Sampler {
  /** `<domain>_<name>`, the last token of the subject */
  readonly name: string;
  /** every metric this sampler may emit */
  readonly metrics: readonly MetricDecl[];
  /**
   * Set when the sampler runs with less than it should (a BPF program that
   * did not load or attach): the reason, reported as its `degraded` status.
   */
  readonly degraded?: string;
  /** one read of the source; throws only when nothing could be read */
  refresh(): Promise<Reading>;
  /** releases what `init` acquired */
  close?(): Promise<void>;
}

/** The interval a sampler runs at when `askedMs` is asked for: never below its own minimum. */
export function runIntervalMs(definition: SamplerDefinition, askedMs: number): number {
  return Math.max(askedMs, definition.minIntervalMs ?? 0);
}

/** A registry entry: builds a sampler or throws SamplerUnsupportedError. */
export interface SamplerDefinition {
  readonly name: string;
  readonly description: string;
  /** reads the live kernel through BPF or perf events, not procfs/sysfs ([kernel] in agent.toml) */
  readonly kernel?: boolean;
  /**
   * The shortest interval it runs at, whatever the config asks: for a source
   * too costly to read many times a second (cgroupfs). The agent says so once.
   */
  readonly minIntervalMs?: number;
  /**
   * Its interval when its own [samplers.<name>] table gives none, instead of
   * [defaults] interval: a slower default for figures that move slowly and
   * cost a frame a tick all the same. --interval still sets it.
   */
  readonly defaultIntervalMs?: number;
  /** the BPF objects it loads, as declared in TS; a test checks them against the compiled C */
  readonly layouts?: readonly BpfLayout[];
  readonly metrics: readonly MetricDecl[];
  init(ctx: SamplerContext): Promise<Sampler>;
}
