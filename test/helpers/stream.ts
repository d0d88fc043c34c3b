import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { retryOnTimeout } from '../../src/bus/retry.js';
import { bundleHostPrefix, isBundleSubject } from '../../src/bus/subjects.js';
import { bundleFrames } from '../../src/frame/bundle.js';
import { decodeFrame } from '../../src/frame/codec.js';

/** The header of one stored frame, as the stream holds it (alone, or in a bundle). */
export interface StoredFrame {
  /** its sampler's subject, where a consumer files it (a bundled frame's message is on <host>._bundle) */
  readonly subject: string;
  /** it came in a bundle */
  readonly bundled: boolean;
  readonly sampler: string;
  readonly instance: number;
  readonly seq: number;
  readonly beginNs: bigint;
  /** the descriptor hash it names */
  readonly descriptor: string;
  /** the stream's own sequence number */
  readonly streamSeq: number;
}

/** The frames' bytes a message carries: its own, or a bundle's (on rezolus.metrics.<host>._bundle). */
export function messageFrames(subject: string, data: Uint8Array): Uint8Array[] {
  return isBundleSubject(subject) ? bundleFrames(data) : [data];
}

/** Every frame in the stream, in stream order (a bundle's in its order), read with an ordered consumer. */
export async function readStoredFrames(nc: NatsConnection, stream = 'REZOLUS'): Promise<StoredFrame[]> {
  const info = await (await jetstreamManager(nc)).streams.info(stream);
  if (info.state.messages === 0) return [];
  const consumer = await retryOnTimeout(() => jetstream(nc).consumers.get(stream));
  const out: StoredFrame[] = [];
  const it = await consumer.consume({ max_messages: 2000 });
  try {
    for await (const m of it) {
      const bundled = isBundleSubject(m.subject);
      for (const bytes of messageFrames(m.subject, m.data)) {
        const f = decodeFrame(bytes);
        const subject = bundled ? bundleHostPrefix(m.subject) + f.sampler : m.subject;
        out.push({ subject, bundled, sampler: f.sampler, instance: f.instance, seq: f.seq, beginNs: f.beginNs, descriptor: f.descriptor, streamSeq: m.seq });
      }
      if (m.info.pending === 0) break;
    }
  } finally {
    await it.close();
  }
  return out;
}

export interface SeqAudit {
  /** sampler -> highest seq stored */
  readonly last: Map<string, number>;
  /** sampler -> seqs in 1..last that are not stored */
  readonly missing: Map<string, number[]>;
  /** sampler -> seqs stored more than once */
  readonly duplicates: Map<string, number[]>;
  readonly totalMissing: number;
  readonly totalDuplicates: number;
  /** frames stored after a frame of the same sampler with a higher seq (the stream is not in seq order) */
  readonly outOfOrder: number;
}

/** Checks the seqs of one agent instance: each of 1..last present exactly once, per sampler. */
export function auditSeqs(frames: readonly StoredFrame[], instance: number): SeqAudit {
  const seen = new Map<string, Map<number, number>>();
  const highest = new Map<string, number>();
  let outOfOrder = 0;
  for (const f of frames) {
    if (f.instance !== instance) continue;
    if (f.seq < (highest.get(f.sampler) ?? 0)) outOfOrder++;
    highest.set(f.sampler, Math.max(f.seq, highest.get(f.sampler) ?? 0));
    const s = seen.get(f.sampler) ?? new Map<number, number>();
    s.set(f.seq, (s.get(f.seq) ?? 0) + 1);
    seen.set(f.sampler, s);
  }
  const last = new Map<string, number>();
  const missing = new Map<string, number[]>();
  const duplicates = new Map<string, number[]>();
  let totalMissing = 0;
  let totalDuplicates = 0;
  for (const [sampler, counts] of seen) {
    const max = Math.max(...counts.keys());
    last.set(sampler, max);
    const gone: number[] = [];
    for (let q = 1; q <= max; q++) if (!counts.has(q)) gone.push(q);
    const twice = [...counts].filter(([, n]) => n > 1).map(([q]) => q);
    missing.set(sampler, gone);
    duplicates.set(sampler, twice);
    totalMissing += gone.length;
    totalDuplicates += twice.length;
  }
  return { last, missing, duplicates, totalMissing, totalDuplicates, outOfOrder };
}
