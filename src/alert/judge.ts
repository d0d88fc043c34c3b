/**
 * The evaluator's decisions: each alert judged on every tick, at once when
 * a frame feeds it, and again the moment its `for` ends; a transition
 * becomes a record (with the incident capture it asks for) written by
 * Transitions. One write per alert at a time.
 */
import type { Logger } from 'pino';
import type { IncidentCapture } from './capture.js';
import type { AlertEvaluator, AlertInput } from './evaluator.js';
import { observation } from './evaluator.js';
import { decide } from './machine.js';
import type { AlertStateWatch } from './state-watch.js';
import type { Transitions } from './transitions.js';

/** Frames that arrive within this of each other are judged together. */
const QUICK_MS = 20;

export class Judge {
  readonly #lastTrue = new Map<string, number>();
  readonly #inflight = new Set<string>();
  readonly #dueTimers = new Set<NodeJS.Timeout>();
  readonly #saidDisagree = new Set<string>();
  #quickDue = false;
  #stopped = false;

  constructor(
    private readonly evaluator: AlertEvaluator,
    private readonly watch: AlertStateWatch,
    private readonly transitions: Transitions,
    private readonly capture: IncidentCapture | undefined,
    /** when this evaluator started: an alert it adopts firing counts as true until then */
    private readonly started: number,
    private readonly log: Logger,
  ) {}

  /** Decides one alert and starts its write when it transitions (the write's promise, else undefined). */
  judge(input: AlertInput, now: number): Promise<unknown> | undefined {
    const key = input.key;
    if (this.#inflight.has(key) || this.#stopped) return undefined;
    const rule = input.rule;
    const seen = this.watch.get(key)?.record;
    const cur = seen?.rule === rule.name ? seen : undefined;
    if (cur?.ruleHash !== undefined && cur.ruleHash !== rule.fingerprint && !this.#saidDisagree.has(rule.name)) {
      this.#saidDisagree.add(rule.name);
      this.log.warn(
        { rule: rule.name, other: cur.evaluator },
        `rule ${rule.name} is defined otherwise by evaluator ${cur.evaluator} (a rollout half done, or another rules file): its alerts flap between the two definitions; give every evaluator the same rules`,
      );
    }
    const t = decide(rule, key, cur, cur?.at, observation(input, now), now, this.#lastTrue, this.started);
    if (t === undefined) return undefined;
    const newEpisode = t.activeAt !== cur?.activeAt;
    const unfinished = cur?.capture !== undefined && cur.capture.result === undefined ? cur.capture : undefined;
    const planned = t.state === 'firing' && (cur?.state !== 'stale' || newEpisode) ? this.capture?.plan(rule, input.host, t.activeAt, now) : undefined;
    // a capture not written yet stays (it names its own episode); a new one does not replace it
    const keep = newEpisode ? unfinished : cur?.capture;
    const record = this.transitions.record(input, t, now, unfinished ?? planned ?? keep);
    this.#inflight.add(key);
    if (t.state === 'pending') {
      // fire on time, not at the next frame or tick after `for`
      const timer = setTimeout(() => {
        this.#dueTimers.delete(timer);
        void this.judge(input, Date.now());
      }, Math.max(0, t.activeAt + rule.forMs - now) + 5);
      this.#dueTimers.add(timer);
    }
    return this.transitions.apply(key, rule, record).finally(() => this.#inflight.delete(key));
  }

  /** Every alert, once (the tick); resolves when their writes are done. */
  async all(now: number): Promise<void> {
    const writes: Promise<unknown>[] = [];
    this.evaluator.takeDirty();
    for (const [input] of this.evaluator.observe(now)) {
      const write = this.judge(input, now);
      if (write !== undefined) writes.push(write);
    }
    await Promise.all(writes);
  }

  /** A frame fed the evaluator: the alerts it fed are judged within QUICK_MS, together with the frames that follow it. */
  fed(): void {
    if (this.#quickDue || this.#stopped) return;
    this.#quickDue = true;
    setTimeout(() => {
      this.#quickDue = false;
      if (this.#stopped) return;
      const now = Date.now();
      for (const input of this.evaluator.takeDirty()) void this.judge(input, now);
    }, QUICK_MS);
  }

  /** Forgets what it kept of alerts whose windows were dropped. */
  forget(keys: readonly string[]): void {
    for (const key of keys) this.#lastTrue.delete(key);
  }

  stop(): void {
    this.#stopped = true;
    for (const t of this.#dueTimers) clearTimeout(t);
    this.#dueTimers.clear();
  }
}
