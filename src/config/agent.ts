import { hostname } from 'node:os';
import type { FileSpec, SectionSpec } from './schema.js';
import { logSection, natsSection } from './schema.js';
import { loadConfig, type TableSpec } from './load.js';
import { readNatsSecurity, type NatsSecurity } from './nats.js';
import { httpToken } from './http-token.js';
import { DEFAULT_STREAM } from '../bus/subjects.js';
import { MAX_BUNDLE_INTERVAL_MS } from '../frame/bundle.js';
import { DEFAULT_TIMING_BUDGET } from '../samplers/syscall/shared/sampling.js';

export const AGENT_SPEC: FileSpec = {
  general: {
    doc: 'The host and where samplers read from.',
    keys: {
      host: { type: 'string', default: '', doc: 'Host name in subjects and the host label; empty = this machine\'s hostname (made subject-safe). --host overrides.' },
      procfs: { type: 'string', default: '/proc', doc: 'Root of procfs. Tests point it at test/fixtures/rootfs/proc.' },
      sysfs: { type: 'string', default: '/sys', doc: 'Root of sysfs.' },
    },
  },
  nats: natsSection,
  log: logSection,
  defaults: {
    doc: 'Defaults for every sampler; a [samplers.<name>] table overrides them.',
    keys: {
      enabled: { type: 'boolean', default: true, doc: 'Run samplers unless their own table says otherwise.' },
      interval: { type: 'duration', default: '1s', minMs: 10, doc: 'Refresh interval; ticks are aligned to whole intervals of the wall clock. Samplers with a slower default of their own (cpu_perf, rezolus_bpf: 10s, shown in their tables) keep it unless their table sets one. --interval overrides every sampler.' },
    },
  },
  stream: {
    doc: 'The JetStream stream that keeps the rolling window (the hindsight buffer). Created when missing; its limits are updated to these values; a stream whose storage, retention, discard or subjects conflict is refused.',
    keys: {
      name: { type: 'string', default: DEFAULT_STREAM, doc: 'Stream name.' },
      max_age: { type: 'duration', default: '15m', minMs: 1000, doc: 'How far back the window reaches (the hindsight lookback).' },
      max_bytes: { type: 'size', default: '1GiB', doc: 'Disk bound of the window; the oldest frames go first.' },
      max_msgs_per_subject: { type: 'integer', default: 100000, min: 1, max: 1e9, doc: 'Guard so one noisy host/sampler cannot evict the fleet (15 min at 100 ms is 9000).' },
      duplicate_window: { type: 'duration', default: '2m', minMs: 1000, doc: 'How long a retried publish (same Nats-Msg-Id) is recognised; capped at max_age.' },
      replicas: { type: 'integer', default: 1, min: 1, max: 5, doc: '1 for a single server, 3 in a cluster.' },
      bundle: { type: 'boolean', default: true, doc: 'One message per tick holding the frames of every sampler refreshed on it, on rezolus.metrics.<host>._bundle: one publish and one ack instead of one per sampler, for the agent, the server and every consumer. false: one message per frame on rezolus.metrics.<host>.<sampler>, for subscribers that pick a sampler by subject, and for consumers older than bundles (upgrade those first). Consumers take both.' },
      bundle_interval: { type: 'duration', default: '500ms', minMs: 0, maxMs: MAX_BUNDLE_INTERVAL_MS, doc: 'With bundle = true, ticks faster than this share a bundle, sent at each whole multiple of it of the wall clock: at 100ms and 500ms, five ticks a message, one publish and one ack instead of five, for 0.78x the agent\'s CPU at 10 Hz; consumers see a frame up to this much minus the interval later. Ticks this slow or slower (the default 1s) go at once, or, while faster ticks run, with their next bundle (at most this much and one faster tick later). 0s: every tick at once. At most 500ms: the exporter and the recorder tell a second live agent claiming the host from a restarted one by how long the first has been quiet (the recorder: 1 s of frame time), and a host must be heard more often than that.' },
    },
  },
  descriptors: {
    doc: 'The KV bucket of frame descriptors (content-addressed by hash).',
    keys: {
      ttl: { type: 'duration', default: '24h', minMs: 60_000, doc: 'Age after which an unused descriptor expires; the agent re-puts the ones it uses every ttl/4. Keep it well above stream.max_age.' },
    },
  },
  buffer: {
    doc: 'Frames waiting for a JetStream ack (the agent keeps publishing through NATS outages).',
    keys: {
      max_bytes: { type: 'size', default: '64MiB', doc: 'Bound of the frames kept while NATS is away, each counted as its bytes plus 256 bytes of bookkeeping; the agent\'s RSS grows by about twice this when it is full (test/bench/failover.ts). When full, the oldest unacked frames are dropped and counted (rezolus_publish_dropped).' },
    },
  },
  kernel: {
    doc: 'Samplers that read the live kernel through BPF programs and perf events (they need root; BPF needs BTF).',
    keys: {
      enabled: { type: 'boolean', default: true, doc: 'Run them (each still obeys its own [samplers.<name>] table). false reports them disabled: for an agent whose procfs root is a fixture.' },
      syscall_timing_budget: { type: 'integer', default: DEFAULT_TIMING_BUDGET, min: 0, max: 1e9, doc: 'syscall_latency times every syscall of a class while the class runs at most this many a second per CPU (the highest rate of its last three windows of at least 250ms, so a burst after a quiet spell is timed in full until the next refresh). Above it, a random 1 in 2^k of the class\'s syscalls is timed and counted 2^k times: the kernel skips the clock reads and the histogram add of the others (with syscall_counts on, 145.6 instead of 242.2 ns of BPF a syscall on an AMD EPYC VM); the distribution stays unbiased, but the counts and the tail become estimates (a rare slow syscall among many fast ones of its class may be missed, or counted 2^k times). syscall_latency_timed says the share. 0: time every syscall (exact counts).' },
      bpf_stats: { type: 'boolean', default: false, doc: 'Have the kernel count run count and run time of every BPF program while the agent runs (BPF_ENABLE_STATS, released on exit; costs tens of ns per program run), so rezolus_bpf publishes them. Off, rezolus_bpf publishes zeros unless sysctl kernel.bpf_stats_enabled=1.' },
    },
  },
  cgroups: {
    doc: 'Container telemetry (the cgroup_resources sampler): which cgroups get series of their own.',
    keys: {
      max_cgroups: { type: 'integer', default: 1024, min: 1, max: 100000, doc: 'At most this many cgroups are published on their own; the others are summed into cgroup="other" and counted in cgroup_folded. A cgroup keeps its place while it exists.' },
      max_depth: { type: 'integer', default: 6, min: 0, max: 64, doc: 'Levels below the root cgroup that are looked at (0 = the root only); deeper ones are not read at all.' },
      open_files: { type: 'integer', default: 1024, min: 0, max: 100000, doc: 'cgroupfs files kept open between refreshes, so each is one read instead of open, read and close (0.44-0.74x the CPU per refresh at 100-1000 cgroups). Each is a file descriptor of the agent (at most a quarter of its limit) and holds ~4 KiB of kernel memory: 1024 files, ~68 cgroups of v1 hierarchies, ~4.4 MiB. Past this many, files are opened for each read; 0 keeps none open.' },
    },
  },
  http: {
    doc: 'The latest snapshot over HTTP: GET /metrics/binary (msgpack) and /metrics/json, for `rezolus record URL`.',
    keys: {
      enabled: { type: 'boolean', default: true, doc: 'Serve it. When the port is taken the agent warns and goes on without it.' },
      listen: { type: 'listen', default: '127.0.0.1:4241', doc: 'HOST:PORT. Loopback by default; any other address needs a token.' },
      token: {
        type: 'string', default: '',
        doc: 'Requests must carry "Authorization: Bearer <token>" (401 otherwise). Required when listen is not a loopback address. Env REZOLUS_HTTP_TOKEN overrides.',
      },
    },
  },
};

export const SAMPLER_KEYS: SectionSpec = {
  doc: 'Per-sampler settings.',
  keys: {
    enabled: { type: 'boolean', default: true, doc: 'Run this sampler.' },
    interval: { type: 'duration', default: '1s', minMs: 10, doc: 'Refresh interval of this sampler.' },
  },
};

export interface SamplerSettings {
  readonly enabled: boolean;
  readonly intervalMs: number;
}

export interface AgentConfig {
  readonly file: string;
  readonly host: string;
  readonly procfs: string;
  readonly sysfs: string;
  readonly natsUrl: string;
  /** credentials, TLS and inbox prefix ([nats]); absent = none */
  readonly nats?: NatsSecurity | undefined;
  readonly logLevel: string;
  readonly samplers: Readonly<Record<string, SamplerSettings>>;
  readonly stream: {
    readonly name: string;
    readonly maxAgeMs: number;
    readonly maxBytes: number;
    readonly maxMsgsPerSubject: number;
    readonly duplicateWindowMs: number;
    readonly replicas: number;
  };
  /** one message per tick ([stream] bundle) */
  readonly bundle: boolean;
  /** faster ticks share a bundle, sent at each whole multiple of this ([stream] bundle_interval); 0: every tick */
  readonly bundleIntervalMs: number;
  readonly descriptorTtlMs: number;
  readonly bufferMaxBytes: number;
  readonly kernel: { readonly enabled: boolean; readonly bpfStats: boolean; readonly syscallTimingBudget?: number };
  readonly cgroups: { readonly maxCgroups: number; readonly maxDepth: number; readonly openFiles: number };
  /** where to serve the snapshot; undefined = not served */
  readonly http: { readonly host: string; readonly port: number; readonly token?: string } | undefined;
}

export interface AgentOverrides {
  readonly host?: string | undefined;
  readonly natsUrl?: string | undefined;
  readonly intervalMs?: number | undefined;
  /** intervals of named samplers, over their own tables (intervalMs still overrides) */
  readonly samplerIntervalMs?: Readonly<Record<string, number>> | undefined;
  readonly logLevel?: string | undefined;
}

/** A sampler the config knows: its name, and its own default interval when it has one (SamplerDefinition). */
export type ConfigSampler = string | { readonly name: string; readonly defaultIntervalMs?: number };

/**
 * Loads config/agent.toml (or defaults) and applies command-line overrides.
 * A sampler's interval: --interval, else the overrides' per-sampler one, else
 * its own table's, else its own default (defaultIntervalMs), else [defaults].
 */
export function loadAgentConfig(path: string | undefined, samplerList: readonly ConfigSampler[], o: AgentOverrides = {}): AgentConfig {
  const samplerNames = samplerList.map((s) => (typeof s === 'string' ? s : s.name));
  const ownDefault = new Map(samplerList.flatMap((s) => (typeof s === 'string' || s.defaultIntervalMs === undefined ? [] : [[s.name, s.defaultIntervalMs] as const])));
  const tables: Record<string, TableSpec> = { samplers: { names: samplerNames, keys: SAMPLER_KEYS } };
  const f = loadConfig(path, AGENT_SPEC, tables);
  const s = (section: string, key: string): unknown => f.sections[section]?.[key];
  const samplers: Record<string, SamplerSettings> = {};
  for (const name of samplerNames) {
    const own = f.tables.samplers?.[name] ?? {};
    samplers[name] = {
      enabled: (own.enabled ?? s('defaults', 'enabled')) as boolean,
      intervalMs: o.intervalMs ?? o.samplerIntervalMs?.[name] ?? ((own.interval ?? ownDefault.get(name) ?? s('defaults', 'interval')) as number),
    };
  }
  const host = o.host ?? (s('general', 'host') as string);
  const listen = s('http', 'listen') as { host: string; port: number };
  const enabled = s('http', 'enabled') as boolean;
  const token = enabled ? httpToken(listen, s('http', 'token') as string, `${f.path}: [http]`) : '';
  return {
    file: f.path,
    host: host === '' ? hostname() : host,
    procfs: s('general', 'procfs') as string,
    sysfs: s('general', 'sysfs') as string,
    natsUrl: o.natsUrl ?? (s('nats', 'url') as string),
    nats: readNatsSecurity(f.sections.nats, f.path),
    logLevel: o.logLevel ?? (s('log', 'level') as string),
    samplers,
    stream: {
      name: s('stream', 'name') as string,
      maxAgeMs: s('stream', 'max_age') as number,
      maxBytes: s('stream', 'max_bytes') as number,
      maxMsgsPerSubject: s('stream', 'max_msgs_per_subject') as number,
      duplicateWindowMs: s('stream', 'duplicate_window') as number,
      replicas: s('stream', 'replicas') as number,
    },
    bundle: s('stream', 'bundle') as boolean,
    bundleIntervalMs: s('stream', 'bundle_interval') as number,
    descriptorTtlMs: s('descriptors', 'ttl') as number,
    bufferMaxBytes: s('buffer', 'max_bytes') as number,
    kernel: { enabled: s('kernel', 'enabled') as boolean, bpfStats: s('kernel', 'bpf_stats') as boolean, syscallTimingBudget: s('kernel', 'syscall_timing_budget') as number },
    cgroups: {
      maxCgroups: s('cgroups', 'max_cgroups') as number,
      maxDepth: s('cgroups', 'max_depth') as number,
      openFiles: s('cgroups', 'open_files') as number,
    },
    http: enabled ? { ...listen, ...(token === '' ? {} : { token }) } : undefined,
  };
}
