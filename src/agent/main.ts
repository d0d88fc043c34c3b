import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import type { KV } from '@nats-io/kv';
import type { Logger } from 'pino';
import { permissionViolation } from '../bus/api-errors.js';
import { connectBus } from '../bus/connect.js';
import { STATUS_TTL_MS } from '../bus/kv.js';
import { agentInboxPrefix, hostToken } from '../bus/subjects.js';
import { Publisher } from '../bus/publisher.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { untilReady } from '../bus/ready.js';
import { BundlingSink } from './bundling-sink.js';
import { SnapshotSink, serveSnapshot } from './snapshot.js';
import { StartupSteps } from './startup.js';
import { StoreKeeper } from './store-keeper.js';
import type { AgentConfig } from '../config/agent.js';
import { NO_NATS_SECURITY, type NatsSecurity } from '../config/nats.js';
import { ConfigError, NatsPermissionError, RezolusError } from '../errors.js';
import { SAMPLERS } from '../samplers/registry.js';
import { instanceHex } from '../frame/types.js';
import { VERSION } from '../version.js';
import { Agent } from './agent.js';
import { everyOnTheClock } from './clock.js';
import { appliedAgentMallocArenas } from './malloc-arenas.js';
import { reduceHeapAfterStart } from './heap-reduce.js';
import { startMallocTrim } from './malloc-trim.js';
import { useNativeNumberPacker } from './number-packer.js';
import { shownNodeFlags } from './node-flags.js';
import { appliedAgentV8Flags } from './v8-flags.js';

const STATUS_EVERY_MS = 10_000;
/** How long the first JetStream request waits for its answer before it is sent again. */
const JETSTREAM_PROBE_MS = 2000;

export interface RunningAgent {
  readonly agent: Agent;
  readonly publisher: Publisher;
  readonly nc: NatsConnection;
  readonly streamName: string;
  /** the snapshot endpoint's address, when it is served */
  readonly httpPort: number | undefined;
  stop(): Promise<void>;
}

/** How the process runs the agent: alone (`rezolus agent`), or beside the exporter and the viewer (`rezolus up`, tests). */
export interface AgentProcess {
  /**
   * Give free malloc pages back to the kernel every 10 s (malloc-trim.ts):
   * for a process that is the agent alone. Beside an exporter's heap of
   * hundreds of MiB a trim walks it all (5–25 ms at 320 MiB).
   */
  readonly mallocTrim?: boolean;
  /**
   * Ask V8 once, 15 s after start, to make its heap small (heap-reduce.ts):
   * for a process that is the agent alone, whose heap start-up left large.
   */
  readonly reduceHeap?: boolean;
}

/** Connects, provisions the stream and buckets, and starts sampling. */
export async function runAgent(config: AgentConfig, log: Logger, proc: AgentProcess = {}): Promise<RunningAgent> {
  for (const [key, root] of [['procfs', config.procfs], ['sysfs', config.sysfs]] as const) {
    if (!existsSync(root)) throw new ConfigError(`${key} root ${root} does not exist (${config.file}: [general] ${key}, or --${key})`);
  }
  log.info({ url: config.natsUrl }, 'connecting to NATS (waits until a server answers)');
  // every step that takes long is said while it does (startup.ts)
  const steps = new StartupSteps(log);
  try {
    steps.step(`connecting to NATS at ${config.natsUrl}`);
    const nc = await connectBus({ url: config.natsUrl, name: `rezolus-agent-${config.host}`, log: log.child({ component: 'nats' }), security: agentSecurity(config) });
    try {
      return await start(nc, config, log, steps, proc);
    } catch (error) {
      await nc.close();
      throw error;
    }
  } finally {
    steps.done();
  }
}

async function start(nc: NatsConnection, config: AgentConfig, log: Logger, steps: StartupSteps, proc: AgentProcess): Promise<RunningAgent> {
  // a cluster answers its JetStream API once it has elected a meta leader: waited for, and said (bus/ready.ts)
  steps.step(`waiting for JetStream at ${config.natsUrl}`);
  const jsm = await untilReady(async () => {
    // a short probe: a request sent before the cluster has a meta leader is dropped, not answered late
    await (await jetstreamManager(nc, { checkAPI: false, timeout: JETSTREAM_PROBE_MS })).getAccountInfo();
    return jetstreamManager(nc, { checkAPI: false });
  }, { log, what: `JetStream at ${config.natsUrl}` }).catch((error: unknown) => {
    const refused = permissionViolation(error);
    if (refused?.operation === 'subscription') {
      // the first request needs a reply inbox, and a per-host user may use only its own (_INBOX_<host>)
      throw new NatsPermissionError(
        `this NATS user may not receive replies on ${refused.subject} (the inbox of host "${hostToken(config.host)}"): ` +
          'is --host / [general] host the host this user was made for by rezolus nats-auth? (or set [nats] inbox_prefix)',
        { cause: error },
      );
    }
    if (refused !== undefined) {
      throw new NatsPermissionError(`this NATS user may not use the JetStream API (${refused.message}): check the user's permissions (see rezolus nats-auth)`, { cause: error });
    }
    throw new RezolusError('JETSTREAM_UNAVAILABLE', `NATS at ${config.natsUrl} has no JetStream (start nats-server with -js): ${String(error)}`, { cause: error });
  });
  const keeper: StoreKeeper = new StoreKeeper({
    nc,
    jsm,
    host: hostToken(config.host),
    stream: config.stream,
    descriptorTtlMs: config.descriptorTtlMs,
    statusTtlMs: STATUS_TTL_MS,
    log,
    // the publisher is made below, with the keeper's callback; this runs only once both exist
    queued: (hash: string): boolean => publisher.isDescriptorQueued(hash),
  });
  steps.step(`creating or checking stream ${config.stream.name} and the buckets at ${config.stream.replicas} replicas`);
  // at 3 replicas, a stream waits for its peers to be current: a create that times out is tried again (it is idempotent)
  const { descriptors, status } = await untilReady(() => keeper.provision(), { log, what: `stream ${config.stream.name} and its buckets at ${config.stream.replicas} replicas` });
  await warnIfHostTaken(status, hostToken(config.host), log);
  const publisher: Publisher = new Publisher({
    nc,
    descriptors,
    host: config.host,
    maxBufferBytes: config.bufferMaxBytes,
    log: log.child({ component: 'publisher' }),
    onRetry: (error) => keeper.publishFailed(error),
  });
  const instance = randomInt(1, 2 ** 32 - 1);
  const snapshots = new SnapshotSink(config.bundle ? new BundlingSink(publisher, config.host, instance, config.bundleIntervalMs) : publisher);
  let http: Server | undefined;
  if (config.http !== undefined) {
    http = await serveSnapshot(snapshots, hostToken(config.host), config.http, log.child({ component: 'http' })).catch((error: unknown) => {
      log.warn({ listen: `${config.http?.host}:${config.http?.port}`, err: error }, 'cannot serve the snapshot over HTTP; going on without it ([http] in agent.toml)');
      return undefined;
    });
  }
  const started = new Date().toISOString();
  let statusTimer: NodeJS.Timeout | undefined;
  const agent: Agent = new Agent({
    host: config.host,
    instance,
    samplers: SAMPLERS.map((definition) => {
      const own = config.samplers[definition.name] ?? { enabled: false, intervalMs: 1000 };
      const off = definition.kernel === true && !config.kernel.enabled;
      return { definition, ...own, enabled: own.enabled && !off, ...(off && own.enabled ? { reason: 'kernel samplers are off ([kernel] enabled = false)' } : {}) };
    }),
    context: { procRoot: config.procfs, sysRoot: config.sysfs, bpfStats: config.kernel.bpfStats, syscallTimingBudget: config.kernel.syscallTimingBudget, cgroups: config.cgroups },
    sink: snapshots,
    descriptorTtlMs: config.descriptorTtlMs,
    descriptorKeepMs: config.stream.maxAgeMs,
    log: log.child({ component: 'agent' }),
    onStatusChange: () => {
      clearTimeout(statusTimer);
      statusTimer = setTimeout(() => void writeStatus(), 100);
    },
  });
  let state: 'running' | 'stopped' = 'running';
  const writeStatus = async (): Promise<void> => {
    await putStatus(status, agent, publisher, { instance, started, state }).then(
      () => keeper.statusWritten(),
      (error: unknown) => keeper.statusFailed(error),
    );
  };
  const nativeNumbers = useNativeNumberPacker(appliedAgentV8Flags());
  await agent.start((sampler) => steps.step(`starting sampler ${sampler}`));
  keeper.watch(agent);
  // on the clock, 3 ms past the boundary: in the wake-up of a tick (clock.ts)
  const stopPeriodic = everyOnTheClock(STATUS_EVERY_MS, 3, () => void writeStatus());
  const stopTrim = proc.mallocTrim === true ? startMallocTrim() : undefined;
  const cancelReduce = proc.reduceHeap === true ? reduceHeapAfterStart() : undefined;
  log.info({ host: agent.host, instance: instanceHex(instance), stream: config.stream.name, node_flags: shownNodeFlags(process.execArgv), v8_flags: appliedAgentV8Flags(), native_numbers: nativeNumbers, malloc_arena_max: appliedAgentMallocArenas(), malloc_trim: stopTrim !== undefined, reduce_heap: cancelReduce !== undefined }, 'agent running');
  return {
    agent,
    publisher,
    nc,
    streamName: config.stream.name,
    httpPort: http === undefined ? undefined : (http.address() as AddressInfo).port,
    async stop() {
      http?.close();
      stopPeriodic();
      stopTrim?.();
      cancelReduce?.();
      clearTimeout(statusTimer);
      keeper.stop();
      await agent.stop();
      await publisher.close(2000);
      state = 'stopped';
      await writeStatus();
      await nc.drain().catch(() => nc.close());
    },
  };
}

/**
 * The agent's NATS security: as configured, with its own inbox prefix
 * `_INBOX_<host>` unless one is set, so a per-host user needs (and gets) the
 * right to subscribe to its own replies only.
 */
export function agentSecurity(config: AgentConfig): NatsSecurity {
  const s = config.nats ?? NO_NATS_SECURITY;
  return s.inboxPrefix !== '' ? s : { ...s, inboxPrefix: agentInboxPrefix(config.host) };
}

/**
 * Two agents publishing for one host make the exporter keep one and count the
 * other's frames as contested; say so at start when the host's status is fresh.
 */
async function warnIfHostTaken(kv: KV, host: string, log: Logger): Promise<void> {
  const entry = await kv.get(host).catch(() => null);
  if (entry === null || entry.value.length === 0) return;
  try {
    const doc = entry.json<{ state?: string; updated?: string; instance?: string }>();
    const age = Date.now() - Date.parse(doc.updated ?? '');
    if (doc.state === 'running' && age < 2 * STATUS_EVERY_MS) {
      log.warn(
        { host, other_instance: doc.instance, seconds_ago: Math.round(age / 1000) },
        'another agent reported for this host moments ago; if it is still running, use a distinct --host for each',
      );
    }
  } catch {
    // an unreadable status is not ours to judge
  }
}

async function putStatus(
  kv: KV,
  agent: Agent,
  publisher: Publisher,
  run: { instance: number; started: string; state: 'running' | 'stopped' },
): Promise<void> {
  const p = publisher.stats;
  const doc = {
    host: agent.host,
    state: run.state,
    instance: instanceHex(run.instance),
    version: VERSION,
    started: run.started,
    updated: new Date().toISOString(),
    samplers: agent.status().map((s) => ({
      name: s.name,
      ...s.status,
      interval_ms: s.intervalMs,
      refreshes: s.refreshes,
      errors: s.errors,
      skipped: s.skipped,
      seq: s.seq,
      // a bundling agent's frames share one subject: what tells a reader that this sampler has stopped making them
      ...(s.lastFrameMs === undefined ? {} : { last_frame: new Date(s.lastFrameMs).toISOString() }),
    })),
    publisher: { published: p.published, buffered: p.buffered, buffered_bytes: p.bufferedBytes, dropped: p.dropped, retries: p.retries, refused: p.refused },
  };
  await kv.put(agent.host, JSON.stringify(doc));
}
