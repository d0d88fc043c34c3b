/**
 * The durable source driven without NATS: a port that plays scripted
 * batches and a ledger in memory. What it checks is what a kill or a lost
 * message would otherwise cost: a batch is acked only when received whole
 * and committed, and nothing is kept twice or skipped.
 */
import test from 'ava';
import type { StreamIdentity } from '../../src/bus/durable.js';
import type { Descriptor } from '../../src/frame/types.js';
import { silentLogger } from '../../src/log/logger.js';
import type { DescriptorLookup } from '../../src/sources/checks.js';
import { DurableSource, type DurableBatch, type DurableLedger, type DurableMessage, type DurablePort, type OpenedConsumer } from '../../src/sources/durable.js';
import { DESCRIPTOR, frameOf } from './frames.js';

const HOST = 'h1';

const lookup: DescriptorLookup = {
  peek: (hash) => (hash === DESCRIPTOR.hash ? DESCRIPTOR.descriptor : undefined),
  resolve: (hash): Promise<Descriptor | undefined> => Promise.resolve(hash === DESCRIPTOR.hash ? DESCRIPTOR.descriptor : undefined),
};

/**
 * One delivery the port plays: a stream seq with the delivery seq the consumer gives it; `drop` breaks the connection
 * after it. The message is the frame `seq` of `host` (HOST), which ended at `seq` seconds (frames.ts), and was
 * stored `lateS` seconds after that.
 */
interface Delivery {
  readonly seq: number;
  readonly delivery: number;
  readonly drop?: boolean;
  readonly host?: string;
  /** frame seq when it differs from the stream seq (another host's frames) */
  readonly frame?: number;
  readonly lateS?: number;
}

const S = 1_000_000_000;

class ScriptedPort implements DurablePort {
  /** per consumer opened: its batches */
  readonly opened: { afterSeq: number; ignoreAckFloor: boolean; resuming: boolean }[] = [];
  readonly acked: number[] = [];
  #drops = 0;
  readonly #listeners: (() => void)[] = [];

  /** `script(after)`: the batches a consumer opened after stream seq `after` delivers */
  constructor(private readonly script: (consumer: number, after: number) => Delivery[][]) {}

  descriptors(): Promise<DescriptorLookup> {
    return Promise.resolve(lookup);
  }

  open(o: { resuming: boolean; ignoreAckFloor: boolean; afterSeq: (s: StreamIdentity) => number }): Promise<OpenedConsumer> {
    const after = o.afterSeq({ created: 'one stream', lastSeq: 1000 });
    this.opened.push({ afterSeq: after, ignoreAckFloor: o.ignoreAckFloor, resuming: o.resuming });
    const batches = this.script(this.opened.length, after);
    const port = this;
    return Promise.resolve({
      fromSeq: after > 0 ? after + 1 : undefined,
      lostBefore: undefined,
      fetch(): Promise<DurableBatch> {
        const deliveries = batches.shift() ?? [];
        let stopped = false;
        return Promise.resolve({
          stop: () => void (stopped = true),
          async *[Symbol.asyncIterator](): AsyncGenerator<DurableMessage> {
            for (const d of deliveries) {
              if (stopped) return;
              const frame = d.frame ?? d.seq;
              const f = frameOf(d.host ?? HOST, frame);
              const stored = frame * S + 1 + (d.lateS ?? 0) * S;
              yield { subject: f.subject, data: f.data, deliverySequence: d.delivery, streamSequence: d.seq, timestampNanos: stored, pending: 0, ack: () => void port.acked.push(d.seq) };
              if (d.drop === true) port.drop();
            }
          },
        });
      },
      // what the script still holds: a source past its window's end stops only once this is 0
      pending: () => Promise.resolve(batches.flat().length),
    });
  }

  drop(): void {
    this.#drops++;
    for (const l of this.#listeners) l();
  }

  drops(): number {
    return this.#drops;
  }

  onDrop(listener: () => void): void {
    this.#listeners.push(listener);
  }

  untilConnected(): Promise<void> {
    return Promise.resolve();
  }

  remove(): Promise<void> {
    return Promise.resolve();
  }
}

class MemoryLedger implements DurableLedger {
  readonly kept: number[] = [];
  /** the kept count at each commit */
  readonly commits: number[] = [];
  base = 0;

  constructor(private readonly held: number[] = []) {
    this.kept.push(...held);
  }

  get maxSeq(): number {
    return this.kept.reduce((m, s) => Math.max(m, s), 0);
  }

  afterSeq(): number {
    return this.maxSeq;
  }

  async replayHeld(each: (subject: string, data: Uint8Array, timeNs: bigint) => Promise<void>): Promise<{ lostHeld: boolean; finished: boolean }> {
    for (const seq of this.held) {
      const f = frameOf(HOST, seq);
      // stored on time, as ScriptedPort stores a frame by default
      await each(f.subject, f.data, BigInt(seq * S + 1));
    }
    return { lostHeld: false, finished: false };
  }

  keep(m: { seq: number }): void {
    this.kept.push(m.seq);
  }

  commit(): void {
    this.commits.push(this.kept.length);
  }
}

/** the window's end: frame 10 ends in it, 11 after it (frames.ts); rows of 1 ns (no rounding of the bounds), so the grace is its least, 2 s */
const END_NS = 10n * BigInt(S) + 1n;

/** Runs a source to the end of its window and returns the frames handed on, as seqs (host h1) or `host:seq`. */
async function run(port: ScriptedPort, ledger: MemoryLedger, resuming = false): Promise<(number | string)[]> {
  const source = new DurableSource({ port, ledger, pick: undefined, startNs: 0n, endNs: END_NS, intervalNs: 1n, resuming, stream: 'S' }, silentLogger());
  const used: (number | string)[] = [];
  await source.start((f) => void used.push(f.host === HOST ? f.seq : `${f.host}:${f.seq}`));
  await source.done;
  return used;
}

const deliveries = (seqs: number[], firstDelivery = 1): Delivery[] => seqs.map((seq, i) => ({ seq, delivery: firstDelivery + i }));
/** the frame past the window's end that ends the source: its host and sampler are done, and no other was seen */
const END = (delivery: number): Delivery => ({ seq: 11, delivery });

test('a batch received whole is committed, then acked once at its last message', async (t) => {
  const port = new ScriptedPort(() => [deliveries([1, 2, 3]), [...deliveries([4, 5], 4), END(6)]]);
  const ledger = new MemoryLedger();
  const used = await run(port, ledger);
  t.deepEqual(used, [1, 2, 3, 4, 5]);
  t.deepEqual(ledger.kept, [1, 2, 3, 4, 5, 11], 'the frame past the end is kept too (it closed the window)');
  t.deepEqual(port.acked, [3, 11], 'each batch acked once, at its last message read');
  t.deepEqual(ledger.commits, [3, 6], 'a commit before every ack');
  t.is(port.opened.length, 1);
});

test('a gap in the delivery sequence: nothing of that batch is acked, and the consumer is recreated just after the ledger', async (t) => {
  // delivery 3 (stream seq 3) was lost on the way: 4 arrives as delivery 4
  const port = new ScriptedPort((consumer, after) =>
    consumer === 1 ? [[{ seq: 1, delivery: 1 }, { seq: 2, delivery: 2 }, { seq: 4, delivery: 4 }]] : [[...deliveries([3, 4, 5, 6].filter((s) => s > after)), END(5)]],
  );
  const ledger = new MemoryLedger();
  const used = await run(port, ledger);
  t.deepEqual(used, [1, 2, 3, 4, 5, 6], 'every frame once, in order');
  t.deepEqual(ledger.kept, [1, 2, 3, 4, 5, 6, 11]);
  t.deepEqual(port.opened.map((o) => o.afterSeq), [0, 2], 'recreated after the last seq kept');
  t.false(port.acked.includes(2), 'the broken batch was not acked (an ack-all at 2 is harmless, but at 4 would have acked the lost 3)');
  t.deepEqual(ledger.commits[0], 2, 'what was kept is still committed');
});

test('a connection drop during a batch: not acked, consumer recreated, redeliveries of kept seqs skipped', async (t) => {
  const port = new ScriptedPort((consumer) =>
    // the second consumer starts over at seq 1 (as if its ack floor were behind): 1 and 2 are redeliveries
    consumer === 1 ? [[{ seq: 1, delivery: 1 }, { seq: 2, delivery: 2, drop: true }, { seq: 3, delivery: 3 }]] : [[...deliveries([1, 2, 3, 4]), END(5)]],
  );
  const ledger = new MemoryLedger();
  const used = await run(port, ledger);
  t.deepEqual(used, [1, 2, 3, 4]);
  t.deepEqual(ledger.kept, [1, 2, 3, 4, 11], 'nothing kept twice');
  t.is(port.opened.length, 2);
  t.false(port.acked.includes(2) || port.acked.includes(3), 'the batch broken by the drop was not acked');
});

test('a restart feeds what the ledger holds first, through the same order guard, then reads after it', async (t) => {
  const port = new ScriptedPort((_c, after) => [[...deliveries([1, 2, 3, 4, 5].filter((s) => s > after)), END(3)]]);
  const ledger = new MemoryLedger([1, 2, 3]);
  const used = await run(port, ledger, true);
  t.deepEqual(used, [1, 2, 3, 4, 5], 'held frames, then the new ones');
  t.deepEqual(port.opened, [{ afterSeq: 3, ignoreAckFloor: false, resuming: true }]);
  t.deepEqual(ledger.kept, [1, 2, 3, 4, 5, 11]);
});

test('a frame of the window stored after its end (a fleet behind) is used; one that ended after it is not', async (t) => {
  // h1's frames are stored 5 s late, h2's on time (store times go up, as in a stream): a cut at the end's store
  // time (10 s) lost h1's frames 6 to 10
  const h1 = (seq: number, frame: number): Delivery => ({ seq, delivery: seq, frame, lateS: 5 });
  const h2 = (seq: number, frame: number): Delivery => ({ seq, delivery: seq, frame, host: 'h2' });
  const port = new ScriptedPort(() => [
    [h1(1, 4), h2(2, 9), h1(3, 5), h2(4, 10), h1(5, 6), h2(6, 11)],
    [h1(7, 7), h1(8, 8), h1(9, 9), h1(10, 10)],
    [h1(11, 11), h1(12, 12)],
  ]);
  const ledger = new MemoryLedger();
  const used = await run(port, ledger);
  t.deepEqual(used, [4, 'h2:9', 5, 'h2:10', 6, 7, 8, 9, 10], 'frames ended within the window, however late stored');
  t.deepEqual(port.acked, [6, 10, 11], "the read ended at h1's first frame past the end: every host and sampler seen is done");
});

test('a host that sends nothing past the end is waited for until the deadline, in store time', async (t) => {
  // h2 stops within the window; h1 goes on. The deadline: the end (10 s) + 2 intervals of 1 s + the lateness seen
  // (h2's last frame, 3 s) = 15 s; h1's frame 15, stored at 16 s, is past it
  const port = new ScriptedPort(() => [
    [
      { seq: 1, delivery: 1, host: 'h2', frame: 9 },
      { seq: 2, delivery: 2, frame: 10, lateS: 1 },
      { seq: 3, delivery: 3, frame: 11, lateS: 1 },
      { seq: 4, delivery: 4, host: 'h2', frame: 10, lateS: 3 },
      { seq: 5, delivery: 5, frame: 12, lateS: 1 },
      { seq: 6, delivery: 6, frame: 13, lateS: 1 },
      { seq: 7, delivery: 7, frame: 14, lateS: 1 },
      { seq: 8, delivery: 8, frame: 15, lateS: 1 },
    ],
  ]);
  const ledger = new MemoryLedger();
  const used = await run(port, ledger);
  t.deepEqual(used, ['h2:9', 10, 'h2:10'], "h2's last frame, stored 3 s after the end, is still in");
  t.deepEqual(ledger.kept, [1, 2, 3, 4, 5, 6, 7, 8], 'the first message stored after the deadline is read (its own lateness could have moved it), then the read ends');
  t.deepEqual(port.acked, [8]);
});

test('a host whose clock is ahead (its first frame stamped far past the end) does not end the window before it is over', async (t) => {
  // h2's clock is 100 s ahead: its frame, stored at 1 s, ended at 101 s. It is the window's first message; h1 then
  // sends frames 1 to 10 on time, and 11 (review: the window closed at h2's frame, nothing recorded)
  const port = new ScriptedPort(() => [
    [{ seq: 1, delivery: 1, host: 'h2', frame: 101, lateS: -100 }, ...Array.from({ length: 11 }, (_, i) => ({ seq: i + 2, delivery: i + 2, frame: i + 1 }))],
  ]);
  const used = await run(port, new MemoryLedger());
  t.deepEqual(used, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "h1's frames of the window are all used");
});

test('frames that ended at or before the start are the window before\'s, stored late or not', async (t) => {
  const source = new DurableSource({ port: new ScriptedPort(() => [deliveries([3, 4, 5, 11])]), ledger: new MemoryLedger(), pick: undefined, startNs: 4n * BigInt(S) + 1n, endNs: END_NS, intervalNs: 1n, resuming: false, stream: 'S' }, silentLogger());
  const used: number[] = [];
  await source.start((f) => void used.push(f.seq));
  await source.done;
  t.deepEqual(used, [5], 'frame 4 ended at the start itself: not in');
  t.like(source.windowSummary(), { before: 2, after: 1, neverPastEnd: 0 });
});

/** A ledger that held frames of several hosts, each stored as ScriptedPort stores it (`lateS` after it ended). */
class HeldLedger extends MemoryLedger {
  constructor(private readonly frames: { host: string; frame: number; seq: number; lateS: number }[]) {
    super(frames.map((f) => f.seq));
  }

  override async replayHeld(each: (subject: string, data: Uint8Array, timeNs: bigint) => Promise<void>): Promise<{ lostHeld: boolean; finished: boolean }> {
    for (const x of this.frames) {
      const f = frameOf(x.host, x.frame);
      await each(f.subject, f.data, BigInt((x.frame + x.lateS) * S + 1));
    }
    return { lostHeld: false, finished: false };
  }
}

test('a recorder killed while it waits past the end, and resumed, records what one that ran through records', async (t) => {
  // h1 is 5 s behind (frame n stored at n + 5 s); h2 stopped at frame 5. The deadline: 10 + 2 + 5 = 17 s.
  const h1 = (seq: number, frame: number): Delivery => ({ seq, delivery: seq, frame, lateS: 5 });
  const stream = (after: number): Delivery[] =>
    [{ seq: 1, delivery: 1, host: 'h2', frame: 5 }, ...Array.from({ length: 12 }, (_, i) => h1(i + 2, i + 1))]
      .filter((d) => d.seq > after)
      .map((d, i) => ({ ...d, delivery: i + 1 }));
  const through = await run(new ScriptedPort((_c, after) => [stream(after)]), new MemoryLedger());
  t.deepEqual(through, ['h2:5', 1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'ran through: every frame of the window');
  // killed once it had kept h1's frame 7 (stored at 12 s, the end + 2 s): the lateness it had seen comes back with
  // the held frames' store times (review: resumed, it ended at the next message and lost 8 to 10)
  const held = [{ host: 'h2', frame: 5, seq: 1, lateS: 0 }, ...Array.from({ length: 7 }, (_, i) => ({ host: HOST, frame: i + 1, seq: i + 2, lateS: 5 }))];
  const resumed = await run(new ScriptedPort((_c, after) => [stream(after)]), new HeldLedger(held), true);
  t.deepEqual(resumed, through, 'resumed: the same frames');
});
