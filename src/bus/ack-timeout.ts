/**
 * The publish-ack timeout, adapted to how long acks take (the retransmission
 * timer of RFC 6298: smoothed round trip plus four times its variation).
 *
 * A fixed timeout turns an overloaded server into a retry storm: acks later
 * than the timeout make every agent send its frames again, which the server
 * must also store (or dedupe), and every live subscriber receives again. Here
 * an ack that comes in after its publish timed out still counts as a sample,
 * so the next publishes wait as long as the server now needs. The timeout
 * never goes below the configured one (the floor) nor above `ceilingMs`,
 * which stays well inside the stream's duplicate window (2 min), so that a
 * retry of a frame that was in fact stored is still recognised.
 */
export class AckTimeout {
  #srtt = 0;
  #rttvar = 0;
  #samples = 0;

  constructor(
    readonly floorMs: number,
    readonly ceilingMs: number = Math.max(floorMs, 30_000),
  ) {
    if (!(floorMs > 0) || !(this.ceilingMs >= floorMs)) throw new RangeError(`ack timeout bounds ${floorMs}..${ceilingMs} ms`);
  }

  /** An ack came `rttMs` after its publish (late acks included). */
  sample(rttMs: number): void {
    if (!(rttMs >= 0) || !Number.isFinite(rttMs)) return;
    if (this.#samples++ === 0) {
      this.#srtt = rttMs;
      this.#rttvar = rttMs / 2;
      return;
    }
    this.#rttvar = 0.75 * this.#rttvar + 0.25 * Math.abs(this.#srtt - rttMs);
    this.#srtt = 0.875 * this.#srtt + 0.125 * rttMs;
  }

  /** How long the next publish waits for its ack. */
  get ms(): number {
    const t = this.#srtt + 4 * this.#rttvar;
    return Math.min(this.ceilingMs, Math.max(this.floorMs, Math.ceil(t)));
  }
}
