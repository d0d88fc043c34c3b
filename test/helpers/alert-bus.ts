/**
 * A bus for alert tests: a real nats-server with the frames stream and the
 * descriptor bucket, one host publishing memory_available (a gauge, bytes)
 * at a value the test sets, and readers of the alert events stream.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { ALERTS_STREAM, type AlertEvent } from '../../src/alert/contract.js';
import { descriptorBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { metricsSubject } from '../../src/bus/subjects.js';
import { encodeFrame } from '../../src/frame/codec.js';
import { describe, type EncodedDescriptor } from '../../src/frame/descriptor.js';
import type { Logger } from '../../src/log/logger.js';
import { NO_LABELS } from '../../src/metrics/point.js';
import type { MetricDecl } from '../../src/metrics/metric.js';
import { rezolusArgv } from './rezolus-cli.js';

const MEMORY_AVAILABLE: MetricDecl = { name: 'memory_available', kind: 'gauge', unit: 'bytes', labels: [], description: 'available' };
export const MEM_SAMPLER = 'memory_meminfo';
export const MEM_DESCRIPTOR: EncodedDescriptor = describe(MEM_SAMPLER, [{ metric: MEMORY_AVAILABLE, labels: NO_LABELS, value: 0 }]);
export const MiB = 1024 * 1024;

/** Makes the frames stream and the descriptor bucket with the memory descriptor of `host`. */
export async function prepareBus(nc: NatsConnection, host: string, log: Logger): Promise<void> {
  await ensureStream(await jetstreamManager(nc), { name: 'REZOLUS', maxAgeMs: 600_000, maxBytes: 64 << 20, maxMsgsPerSubject: 100_000, duplicateWindowMs: 60_000, replicas: 1 }, log);
  const kv = await descriptorBucket(nc, { ttlMs: 3_600_000, replicas: 1 });
  await kv.put(`${host}.${MEM_DESCRIPTOR.hash}`, MEM_DESCRIPTOR.json);
}

/** A host publishing memory_available every `everyMs` (to the stream, stamped with the wall clock) at `value` bytes. */
export class MemoryHost {
  value = 1024 * MiB;
  seq = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly nc: NatsConnection,
    readonly host: string,
    private readonly everyMs = 200,
  ) {}

  async publish(): Promise<void> {
    const end = BigInt(Date.now()) * 1_000_000n;
    const data = encodeFrame({ host: this.host, sampler: MEM_SAMPLER, instance: 7, seq: ++this.seq, beginNs: end - 1000n, endNs: end, descriptor: MEM_DESCRIPTOR.hash }, [this.value]);
    await jetstream(this.nc).publish(metricsSubject(this.host, MEM_SAMPLER), data);
  }

  start(): void {
    const tick = (): void => {
      void this.publish().catch(() => undefined).finally(() => {
        if (this.#timer !== undefined) this.#timer = setTimeout(tick, this.everyMs);
      });
    };
    this.#timer = setTimeout(tick, 0);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/** Every event in REZOLUS_ALERTS, in stream order (empty when the stream is missing). */
export async function readAlertEvents(nc: NatsConnection): Promise<AlertEvent[]> {
  const jsm = await jetstreamManager(nc);
  let last: number;
  try {
    last = (await jsm.streams.info(ALERTS_STREAM)).state.last_seq;
  } catch {
    return [];
  }
  const out: AlertEvent[] = [];
  for (let seq = 1; seq <= last; seq++) {
    try {
      const m = await jsm.streams.getMessage(ALERTS_STREAM, { seq });
      if (m !== null) out.push(m.json<AlertEvent>());
    } catch {
      // a deleted message
    }
  }
  return out;
}

/** A `rezolus alert` CLI process with its stderr kept. */
export interface AlertProcess {
  readonly child: ChildProcess;
  stderr: string;
}

export function spawnAlert(root: string, args: readonly string[]): AlertProcess {
  const child = spawn(process.execPath, rezolusArgv('alert', ...args), { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  const p: AlertProcess = { child, stderr: '' };
  child.stderr?.on('data', (b: Buffer) => (p.stderr += b.toString()));
  return p;
}
