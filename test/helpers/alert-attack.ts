/**
 * Tools of test/alert/attacks.test.ts: a private nats-server with the frames
 * stream and the memory descriptor, a rules file, the real evaluator
 * in-process with its log kept, records written straight into the state
 * bucket (as a user allowed to write it would), and hosts that publish
 * descriptors and frames of their own choosing on their own subjects.
 */
import type { ExecutionContext } from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { pino, type Logger } from 'pino';
import { ALERT_STATE_BUCKET, parseRecord, type AlertEvent, type AlertRecord, type TransitionEvent } from '../../src/alert/contract.js';
import { runAlert, type RunningAlert } from '../../src/alert/main.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { metricsSubject } from '../../src/bus/subjects.js';
import { loadAlertsConfig } from '../../src/config/alerts.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { hashDescriptorJson } from '../../src/frame/descriptor.js';
import type { Value } from '../../src/metrics/point.js';
import { metricCatalog } from '../../src/samplers/catalog.js';
import { MemoryHost, prepareBus, readAlertEvents } from './alert-bus.js';
import { startTestNats, type TestNats } from './nats.js';

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly key?: string;
  readonly [field: string]: unknown;
}

/** A pino logger whose lines are kept (parsed) for the test to read. */
export function keptLog(level = 'debug'): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = pino({ level }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  return { log, lines };
}

/** The rule lines of `memory_low`: memory_available < 100MiB, firing at once, resolving at once. */
export function memoryRule(extra: readonly string[] = []): string[] {
  const keys = new Map<string, string>([
    ['name', '"memory_low"'], ['metric', '"memory_available"'], ['reduce', '"last"'], ['window', '"1s"'],
    ['op', '"<"'], ['threshold', '"100MiB"'], ['for', '"0s"'], ['keep_firing_for', '"0s"'],
  ]);
  for (const line of extra) {
    const [k, ...v] = line.split('=');
    keys.set((k as string).trim(), v.join('=').trim());
  }
  return ['[[rule]]', ...[...keys].map(([k, v]) => `${k} = ${v}`)];
}

/** A per-series rule on rezolus_sampler_state{state="failed"} (a gauge with labels a host names itself). */
export function samplerRule(extra: readonly string[] = []): string[] {
  return [
    '[[rule]]', 'name = "sampler_failed"', 'metric = "rezolus_sampler_state"', 'match = { state = "failed" }', 'group = "each"',
    'reduce = "last"', 'op = ">"', 'threshold = 0', 'for = "0s"', 'capture = false', ...extra,
  ];
}

export interface AttackBus {
  server: TestNats;
  readonly nc: NatsConnection;
  /** a temp dir of the test (rules files, incidents) */
  readonly dir: string;
  /** MemoryHost per host name given */
  readonly hosts: Map<string, MemoryHost>;
  /** writes a rules file: [general] every 200ms and `general`, the given [capture] lines (or capture off), then the lines */
  rules(name: string, lines: readonly string[], capture?: readonly string[], general?: readonly string[]): string;
  /** runs the evaluator in-process on a rules file; stopped at teardown (unless stopped before) */
  evaluator(file: string, level?: string): Promise<{ alert: RunningAlert; lines: LogLine[]; stop(): Promise<void> }>;
  state(): Promise<KV>;
  /** every record in the bucket, by key */
  records(): Promise<Map<string, AlertRecord>>;
  events(): Promise<AlertEvent[]>;
  transitions(): Promise<TransitionEvent[]>;
}

/** A nats-server with the frames stream and the memory descriptor of each host (not publishing yet). */
export async function attackBus(t: ExecutionContext, hostNames: readonly string[] = ['db-1']): Promise<AttackBus> {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-alert-attack-'));
  const nc = await connect({ servers: server.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  const hosts = new Map<string, MemoryHost>();
  const stops: (() => Promise<void>)[] = [];
  const bus: AttackBus = {
    server,
    nc,
    dir,
    hosts,
    rules(name, lines, capture, general = []) {
      const path = join(dir, name);
      const cap = capture === undefined ? ['[capture]', 'enabled = false'] : ['[capture]', ...capture];
      writeFileSync(path, ['[general]', 'every = "200ms"', ...general, ...cap, ...lines].join('\n'));
      return path;
    },
    async evaluator(file, level = 'debug') {
      const { log, lines } = keptLog(level);
      const alert = await runAlert(loadAlertsConfig(file, metricCatalog(), { natsUrl: bus.server.url }), log);
      let stopped: Promise<void> | undefined;
      const stop = (): Promise<void> => (stopped ??= alert.stop());
      stops.push(stop);
      return { alert, lines, stop };
    },
    state: () => new Kvm(nc).open(ALERT_STATE_BUCKET),
    async records() {
      const kv = await bus.state();
      const out = new Map<string, AlertRecord>();
      const keys: string[] = [];
      for await (const k of await kv.keys()) keys.push(k);
      for (const k of keys) {
        const e = await kv.get(k);
        const r = e === null || e.operation !== 'PUT' ? undefined : parseRecord(e.value);
        if (r !== undefined) out.set(k, r);
      }
      return out;
    },
    events: () => readAlertEvents(nc),
    async transitions() {
      return (await readAlertEvents(nc)).filter((e): e is TransitionEvent => e.kind === 'transition');
    },
  };
  t.teardown(async () => {
    for (const h of hosts.values()) h.stop();
    for (const stop of stops) await stop().catch(() => undefined);
    await nc.close();
    await bus.server.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  for (const name of hostNames) {
    await prepareBus(nc, name, pino({ level: 'silent' }));
    hosts.set(name, new MemoryHost(nc, name));
  }
  return bus;
}

/** A descriptor a host writes for itself: one sampler, one metric, one series per label-value tuple. */
export async function putDescriptor(
  nc: NatsConnection,
  host: string,
  sampler: string,
  metric: { readonly name: string; readonly kind: string; readonly unit: string; readonly labels: readonly string[] },
  series: readonly (readonly string[])[],
): Promise<string> {
  const json = JSON.stringify({
    v: 1, sampler,
    metrics: { [metric.name]: { kind: metric.kind, unit: metric.unit, labels: metric.labels, description: 'attack' } },
    series: series.map((values) => [metric.name, values]),
  });
  const hash = hashDescriptorJson(json);
  await (await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 })).put(`${host}.${hash}`, json);
  return hash;
}

export const SAMPLER_STATE = { name: 'rezolus_sampler_state', kind: 'gauge', unit: 'count', labels: ['sampler', 'state'] } as const;

/** Publishes one frame on the host's own subject (core NATS: the evaluator follows live), stamped `endMs`. */
export function publishFrame(nc: NatsConnection, host: string, sampler: string, hash: string, values: readonly Value[], seq: number, endMs = Date.now(), instance = 1): void {
  const end = BigInt(endMs) * 1_000_000n;
  nc.publish(metricsSubject(host, sampler), encodeFrame({ host, sampler, instance, seq, beginNs: end - 1000n, endNs: end, descriptor: hash }, values));
}

/** A record as an evaluator writes one, with `extra` over it (to make it hostile). */
export function stateRecord(extra: Record<string, unknown>): Record<string, unknown> {
  const now = Date.now();
  return {
    v: 1, rule: 'memory_low', host: 'db-1', series: {}, state: 'resolved', previous: 'firing', seq: 3,
    activeAt: now - 5000, firedAt: now - 4900, resolvedAt: now - 4000, value: 1, threshold: 104857600, unit: 'bytes',
    valueText: '1 B', thresholdText: '100MiB', severity: 'warning', labels: {}, summary: 'attack', evaluator: 'attacker:1:0000',
    at: now - 4000, published: true, ...extra,
  };
}

/** Makes a temp dir removed at teardown. */
export function tempDir(t: ExecutionContext, prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(d, { recursive: true, force: true }));
  return d;
}
