/**
 * One message per tick, or per few fast ticks: the frames the agent makes
 * go out as one bundle (frame/bundle.ts) on `rezolus.metrics.<host>._bundle`,
 * one publish and one ack instead of one per sampler. The agent calls
 * endTick when every refresh started on a tick has ended, so a bundle
 * holds whole ticks, and a frame of a refresh that overran goes out with
 * a later tick.
 *
 * `everyMs` ([stream] bundle_interval): ticks faster than it are kept and
 * sent together, by the first tick of each interval at or past a whole
 * multiple of `everyMs` of the wall clock (the same ticks on every host).
 * At 100 ms and 500 ms, five ticks a message: the agent at 10 Hz took 0.78×
 * the CPU of one message a tick (test/bench/README.md, "bundles of several
 * ticks"); a frame waits at most everyMs − interval longer. A tick as slow
 * as `everyMs` or slower goes at once, with what is kept, unless faster
 * ticks run (one ended within `everyMs` before it): then it waits for their
 * next bundle (at 100 ms, the 1 s tick of cgroup_resources and rezolus_self
 * was a third message each second), and a timer sends it if that bundle has
 * not gone `everyMs` plus one fast tick after it began to wait (a fast
 * sampler that hangs or overruns). Everything kept goes at stop.
 */
import { bundleMsgIdPrefix, bundleSubject } from '../bus/subjects.js';
import { bundleBytesAtMost, MAX_BUNDLE_FRAMES } from '../frame/bundle.js';
import { bundleBytes } from '../frame/bundle-bytes.js';
import { BundleStage } from '../frame/bundle-stage.js';
import { giveFrameBack } from '../frame/frame-slabs.js';
import type { PublishStats } from '../samplers/rezolus/introspection.js';
import type { FrameSink, Tick } from './agent.js';

/** Where bundles go: the Publisher (bus/publisher.ts) or a collector in tests. */
export interface BundleTarget extends FrameSink {
  publishBundle(subject: string, data: Uint8Array, idPrefix: string, seq: number, frames: number): void;
}

/** What a message takes beyond its payload on the wire (subject, Nats-Msg-Id and reply): kept free under max_payload. */
const HEADROOM_BYTES = 1024;
/** The bound of a bundle when the server's max_payload is not known yet (its default is 1 MiB). */
const DEFAULT_LIMIT = 1024 * 1024;

export class BundlingSink implements FrameSink {
  readonly #next: BundleTarget;
  readonly #subject: string;
  readonly #idPrefix: string;
  #seq = 0;
  /** the frames kept for the next bundle, copied as they come */
  readonly #stage = new BundleStage();

  readonly #everyMs: number;
  /** the boundary of the last tick faster than everyMs: while they run, slower ticks go with their bundles */
  #fastAt = Number.NEGATIVE_INFINITY;
  /** the interval of that tick */
  #fastMs = 0;
  /** the boundary of the slow tick whose frames wait for the next fast bundle, if any */
  #heldSince: number | undefined;
  /** sends what a slow tick left waiting if no fast bundle has by then */
  #deadline: NodeJS.Timeout | undefined;

  constructor(next: BundleTarget, host: string, instance: number, everyMs = 0) {
    this.#next = next;
    this.#everyMs = everyMs;
    this.#subject = bundleSubject(host);
    this.#idPrefix = bundleMsgIdPrefix(host, instance);
  }

  get stats(): PublishStats {
    return this.#next.stats;
  }

  maxPayload(): number | undefined {
    return this.#next.maxPayload?.();
  }

  /**
   * Keeps the frame for the next bundle. One that would make the bundle
   * larger than the server takes, or hold more than MAX_BUNDLE_FRAMES, sends
   * what is kept first; one that is too large even alone goes alone on its
   * own subject, after what is kept, where the publisher reports it (never a
   * whole tick refused for one frame). A kept frame is copied and given back
   * to the encoder at once: the caller does not read it after.
   */
  publishFrame(subject: string, data: Uint8Array, idPrefix: string, seq: number): void {
    const limit = (this.#next.maxPayload?.() ?? DEFAULT_LIMIT) - HEADROOM_BYTES;
    if (bundleBytesAtMost(1, data.byteLength) > limit) {
      // what is kept goes first: it may hold this sampler's previous frame, which must not be overtaken
      this.endTick();
      this.#next.publishFrame(subject, data, idPrefix, seq);
      return;
    }
    const stage = this.#stage;
    if (stage.count === MAX_BUNDLE_FRAMES || bundleBytesAtMost(stage.count + 1, stage.frameBytes + data.byteLength) > limit) this.endTick();
    stage.add(data);
    // copied: the encoder may write over it (frame/frame-slabs.ts); the sink is its one holder
    giveFrameBack(data);
  }

  putDescriptor(key: string, value: string, urgent?: boolean): void {
    this.#next.putDescriptor(key, value, urgent);
  }

  /**
   * The agent's tick is over: the frames kept since the last bundle go as
   * one (nothing when there are none), unless the tick is faster than
   * `everyMs` and not the first of its interval at or past a multiple of it,
   * or slower while faster ticks run (#due). No tick (stop, or the timer of
   * a slower tick's wait): they go.
   */
  endTick(tick?: Tick): void {
    if (tick !== undefined && tick.intervalMs < this.#everyMs && tick.boundaryMs >= this.#fastAt) {
      this.#fastAt = tick.boundaryMs;
      this.#fastMs = tick.intervalMs;
    }
    const count = this.#stage.count;
    if (count === 0) return;
    if (tick !== undefined && !this.#due(tick)) return;
    // in lent bytes: the publisher gives them back once acked (frame/bundle-bytes.ts)
    const data = this.#stage.take((n) => bundleBytes.take(n));
    this.#heldSince = undefined;
    if (this.#deadline !== undefined) {
      clearTimeout(this.#deadline);
      this.#deadline = undefined;
    }
    this.#next.publishBundle(this.#subject, data, this.#idPrefix, ++this.#seq, count);
  }

  /** Whether what is kept goes at the end of `tick`. */
  #due(tick: Tick): boolean {
    const every = this.#everyMs;
    // kept since a slow tick for as long as a bundle may wait: it goes, whatever the fast ticks do
    if (this.#heldSince !== undefined && tick.boundaryMs - this.#heldSince >= every) return true;
    if (tick.intervalMs < every) return tick.boundaryMs % every < tick.intervalMs;
    if (tick.boundaryMs - this.#fastAt > every) return true;
    if (this.#heldSince === undefined) {
      this.#heldSince = tick.boundaryMs;
      // the fast bundle normally comes first; this only bounds the wait when it does not
      this.#deadline = setTimeout(() => {
        this.#deadline = undefined;
        this.endTick();
      }, every + this.#fastMs);
      this.#deadline.unref?.();
    }
    return false;
  }
}
