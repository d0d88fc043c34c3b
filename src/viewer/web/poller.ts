/**
 * Runs `tick` every `everyMs`, never two at once: the next tick starts
 * `everyMs` after the previous one started, or at once when it took longer.
 * stop() ends it (a running tick finishes).
 */
export class Poller {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly tick: () => Promise<void>,
    private readonly everyMs = 1000,
  ) {}

  start(): this {
    this.schedule(this.everyMs);
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.run(), ms);
  }

  private async run(): Promise<void> {
    const began = performance.now();
    try {
      await this.tick();
    } catch {
      // a tick reports its own errors on the page; the loop goes on
    } finally {
      this.schedule(Math.max(0, this.everyMs - (performance.now() - began)));
    }
  }
}
