/**
 * What the rezolus_self sampler reads of the agent that runs it: its
 * samplers' bookkeeping and states, and its publisher's counts. The agent
 * implements AgentIntrospection (agent/agent.ts) and hands itself to the
 * samplers in their context; this file imports nothing, so a sampler never
 * imports src/agent/ (the agent imports the samplers).
 */

/**
 * The states a sampler can be in, in the order rezolus_self reports them:
 * active: running whole. degraded: running without some of its parts (the
 * reason names them). disabled: off in the config. unsupported: cannot work
 * on this host (the reason says why). failed: init or the last refresh threw.
 */
export const SAMPLER_STATE = {
  active: 'active',
  degraded: 'degraded',
  disabled: 'disabled',
  unsupported: 'unsupported',
  failed: 'failed',
} as const;
export type SamplerStateName = (typeof SAMPLER_STATE)[keyof typeof SAMPLER_STATE];

/** Every state, in the order of SAMPLER_STATE. */
export const SAMPLER_STATES: readonly SamplerStateName[] = Object.values(SAMPLER_STATE);

/** Per-sampler bookkeeping the agent keeps about itself. */
export interface SamplerStats {
  readonly name: string;
  /** cumulative refresh time, nanoseconds */
  readonly refreshNs: bigint;
  readonly refreshes: number;
  readonly errors: number;
  /** source entries left out as malformed */
  readonly skipped: number;
  /** ticks missed because the previous refresh was still running */
  readonly overruns: number;
}

export interface PublishStats {
  readonly published: number;
  readonly dropped: number;
  readonly retries: number;
  /** frames the server's permissions refused (absent where nothing can refuse) */
  readonly refused?: number;
  readonly buffered: number;
  readonly bufferedBytes: number;
}

export interface AgentIntrospection {
  samplerStats(): readonly SamplerStats[];
  /** every sampler of the registry and its state now */
  samplerStates(): readonly { readonly name: string; readonly state: SamplerStateName }[];
  publishStats(): PublishStats;
}
