/**
 * When a source that reads in the background (replay, durable, poll) is
 * done: at once when stopped before start() began; otherwise once start()
 * has ended, with the read it launched (or without one, when it failed or
 * was stopped meanwhile). So `done` never resolves while start() still
 * holds a connection, and no read runs on unwatched after `done`.
 */
export class RunState {
  readonly done: Promise<void>;
  #settle!: (run: Promise<void>) => void;
  #starting = false;
  #stopped = false;

  constructor() {
    this.done = new Promise<Promise<void>>((resolve) => (this.#settle = resolve)).then((run) => run);
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** start() begins; false when the source was stopped before (done has resolved: start nothing) */
  beginStart(): boolean {
    if (this.#stopped || this.#starting) return false;
    this.#starting = true;
    return true;
  }

  /** start() has ended: `done` settles with `run`, the read it launched (default: none) */
  started(run: Promise<void> = Promise.resolve()): void {
    this.#settle(run);
  }

  stop(): void {
    this.#stopped = true;
    if (!this.#starting) this.#settle(Promise.resolve());
  }
}
