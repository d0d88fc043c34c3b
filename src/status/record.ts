/**
 * The agent status record (KV bucket rezolus_status, key = host token) as
 * `rezolus status` reads it: SUBJECTS.md "Agent status" is the contract.
 * Parsing is tolerant: a field that is missing or of the wrong type is left
 * out rather than failing the whole record, since an older or newer agent
 * may write a little more or less. Pure.
 */

/** The sampler states of the contract (active | degraded | disabled | unsupported | failed). */
export type SamplerState = 'active' | 'degraded' | 'disabled' | 'unsupported' | 'failed';

export interface SamplerRecord {
  readonly name: string;
  /** a state this version does not know is kept as written and counted as neither ok nor failed */
  readonly state: SamplerState | string;
  /** degraded, disabled, unsupported: why */
  readonly reason?: string;
  /** failed: the error */
  readonly error?: string;
  readonly intervalMs?: number;
  /** when the agent made its last frame, unix ms (agents that bundle write it) */
  readonly lastFrameMs?: number;
}

export interface AgentStatusRecord {
  readonly host: string;
  /** running, or stopped after a clean stop */
  readonly state: string;
  readonly instance?: string;
  readonly version?: string;
  /** unix ms */
  readonly startedMs?: number;
  /** unix ms: when the agent wrote this record */
  readonly updatedMs?: number;
  readonly samplers: readonly SamplerRecord[];
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

function time(v: unknown): number | undefined {
  if (typeof v !== 'string') return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms : undefined;
}

function sampler(v: unknown): SamplerRecord | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const name = text(r.name);
  const state = text(r.state);
  if (name === undefined || state === undefined) return undefined;
  const reason = text(r.reason);
  const error = text(r.error);
  const interval = r.interval_ms;
  const lastFrameMs = time(r.last_frame);
  return {
    name,
    state,
    ...(reason === undefined ? {} : { reason }),
    ...(error === undefined ? {} : { error }),
    ...(typeof interval === 'number' && Number.isFinite(interval) && interval > 0 ? { intervalMs: interval } : {}),
    ...(lastFrameMs === undefined ? {} : { lastFrameMs }),
  };
}

/** The record under `key`, or undefined when the value is not an agent status at all (not JSON, no state). */
export function parseAgentStatus(key: string, data: Uint8Array | string): AgentStatusRecord | undefined {
  let doc: unknown;
  try {
    doc = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data));
  } catch {
    return undefined;
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return undefined;
  const r = doc as Record<string, unknown>;
  const state = text(r.state);
  if (state === undefined) return undefined;
  const samplers = Array.isArray(r.samplers) ? r.samplers.map(sampler).filter((s) => s !== undefined) : [];
  const out: AgentStatusRecord = { host: key, state, samplers };
  const instance = text(r.instance);
  const version = text(r.version);
  const startedMs = time(r.started);
  const updatedMs = time(r.updated);
  return {
    ...out,
    ...(instance === undefined ? {} : { instance }),
    ...(version === undefined ? {} : { version }),
    ...(startedMs === undefined ? {} : { startedMs }),
    ...(updatedMs === undefined ? {} : { updatedMs }),
  };
}

/** ok = active or degraded (it publishes), off = disabled or unsupported (by choice or by the host). */
export function samplerClass(state: string): 'ok' | 'failed' | 'off' | 'unknown' {
  if (state === 'active' || state === 'degraded') return 'ok';
  if (state === 'failed') return 'failed';
  if (state === 'disabled' || state === 'unsupported') return 'off';
  return 'unknown';
}
