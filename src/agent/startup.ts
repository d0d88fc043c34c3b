/**
 * The agent's start-up steps, said when one takes long. A user who sees
 * "connecting to NATS" and then nothing for a minute cannot tell a server
 * that does not answer from a cluster electing its leader or a sampler
 * loading its BPF programs: every STILL_EVERY_MS the step under way is
 * logged with how long it has taken so far. A step that blocks the event
 * loop (a BPF program under the kernel's verifier) cannot be said while it
 * runs: it is said when the next step begins, with how long it took.
 */
import type { Logger } from 'pino';

const STILL_EVERY_MS = 10_000;

export class StartupSteps {
  #what: string | undefined;
  #since = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger,
    private readonly everyMs = STILL_EVERY_MS,
  ) {}

  /** The step under way from now on. */
  step(what: string): void {
    this.#close();
    this.#what = what;
    this.#since = Date.now();
    this.#arm();
  }

  /** Start-up is over (or failed). */
  done(): void {
    this.#close();
    this.#what = undefined;
  }

  #arm(): void {
    this.#timer = setTimeout(() => {
      this.log.info({ step: this.#what, waited_s: this.#seconds() }, `still ${this.#what} (${this.#seconds()} s so far)`);
      this.#arm();
    }, this.everyMs);
    this.#timer.unref();
  }

  /** Ends the current step; one that took longer than a say-so without being said (the loop was blocked) is said now. */
  #close(): void {
    clearTimeout(this.#timer);
    if (this.#what !== undefined && Date.now() - this.#since >= this.everyMs) {
      this.log.info({ step: this.#what, took_s: this.#seconds() }, `${this.#what}: took ${this.#seconds()} s`);
    }
  }

  #seconds(): number {
    return Math.round((Date.now() - this.#since) / 1000);
  }
}
