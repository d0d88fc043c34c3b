/**
 * The report `rezolus status` prints, and `--json` prints as it is: field
 * names are snake_case like the agent's status record, and stable (the help
 * of `rezolus status` lists them). Times are RFC 3339 UTC, ages and
 * durations seconds, null where there is nothing to tell.
 */

/**
 * ok: frames are fresh and no sampler failed; failed: a sampler failed;
 * silent: no frame for longer than silent_after_s (or none in the window);
 * stopped: the agent stopped cleanly (its last status record says so).
 */
export type HostState = 'ok' | 'failed' | 'silent' | 'stopped';

export interface SamplerReport {
  readonly name: string;
  /** as the agent's status record says; null for a sampler seen only in the stream (no status record) */
  readonly state: string | null;
  readonly reason: string | null;
  readonly error: string | null;
  readonly interval_ms: number | null;
  /** age of its newest frame in the window; null: none */
  readonly last_frame_age_s: number | null;
}

export interface HostReport {
  readonly host: string;
  readonly state: HostState;
  /** what is wrong, for people ("silent 2m5s", "1 sampler failed"); null when ok */
  readonly problem: string | null;
  /** the newest frame of any sampler (store time) */
  readonly last_frame: string | null;
  readonly last_frame_age_s: number | null;
  /** messages of the host the stream holds: a frame each, or a bundle of a tick's frames each */
  readonly frames: number;
  /** from the agent's status record; null when there is none */
  readonly agent: {
    readonly state: string;
    readonly version: string | null;
    readonly instance: string | null;
    readonly started: string | null;
    readonly updated: string | null;
    readonly updated_age_s: number | null;
  } | null;
  /**
   * sampler counts by class: ok = active or degraded (it publishes), degraded = how many of
   * those ok are degraded, off = disabled or unsupported; null without a status record
   */
  readonly samplers: { readonly ok: number; readonly degraded: number; readonly failed: number; readonly off: number; readonly other: number } | null;
  readonly sampler_states: readonly SamplerReport[];
  /** null when no alert evaluator has made its state bucket (or it could not be read) */
  readonly alerts: { readonly firing: number; readonly pending: number; readonly firing_rules: readonly string[]; readonly pending_rules: readonly string[] } | null;
}

export interface StreamReport {
  readonly name: string;
  readonly subjects: readonly string[];
  readonly messages: number;
  readonly bytes: number;
  /** frame subjects (host × sampler) of the selected hosts */
  readonly subject_count: number;
  /** the window held: store times of the oldest and newest message */
  readonly first: string | null;
  readonly last: string | null;
  readonly window_s: number | null;
  /** limits; null = none */
  readonly max_age_s: number | null;
  readonly max_bytes: number | null;
  readonly max_msgs_per_subject: number | null;
  readonly replicas: number;
  readonly cluster: {
    readonly name: string | null;
    readonly leader: string | null;
    readonly replicas: readonly { readonly name: string; readonly current: boolean; readonly offline: boolean; readonly lag: number; readonly active_s: number | null }[];
  } | null;
}

export interface ConsumerReport {
  readonly name: string;
  readonly durable: boolean;
  /** filter subject(s); null = the whole stream */
  readonly filter: string | null;
  /** messages it has not acked: pending + ack_pending */
  readonly lag: number;
  /** not delivered yet */
  readonly pending: number;
  /** delivered, not acked yet */
  readonly ack_pending: number;
  readonly redelivered: number;
  readonly waiting: number;
  readonly last_active: string | null;
  readonly last_active_age_s: number | null;
}

export interface StatusReport {
  /** layout version of this report */
  readonly v: 1;
  readonly at: string;
  readonly nats: string;
  /** the --hosts selection ("*" = every host) */
  readonly hosts_selected: string;
  readonly silent_after_s: number;
  /** false when a host is silent or stopped, a sampler failed, or no host was found (exit code 1) */
  readonly ok: boolean;
  readonly summary: {
    readonly hosts: number;
    readonly ok: number;
    readonly failed: number;
    readonly silent: number;
    readonly stopped: number;
    readonly alerts_firing: number;
    readonly alerts_pending: number;
  };
  /** problems first: silent, stopped, failed, firing alerts, then ok; by name within each */
  readonly hosts: readonly HostReport[];
  readonly stream: StreamReport;
  /** durable consumers, by name */
  readonly consumers: readonly ConsumerReport[];
  /** consumers without a durable name (replays, viewers, KV watches); not listed */
  readonly ephemeral_consumers: number;
  /** parts that could not be read, one line each */
  readonly notes: readonly string[];
  /**
   * when --hosts (other than "*") matched no host: the hosts the stream holds
   * frames of (count, and the first 20 names, sorted); null otherwise
   */
  readonly hosts_in_stream: { readonly count: number; readonly names: readonly string[] } | null;
}
