/**
 * CPU of encodeFrame alone, on the frames of one simulated host (the fleet
 * bench's 26 samplers: the procfs ones with their fixture readings, the kernel
 * shapes with ~30-bucket histograms), against msgpackr packing the same frame
 * built as an object (what encodeFrame did up to 2026-11-29), in one process,
 * taking turns. The agent encodes one host's frames each tick: at 1 Hz the
 * per-tick figure is the agent's encoding cost per second.
 *
 *   npx tsx test/bench/frame-encode.ts [rounds]
 *
 * Prints µs per host tick for both and their ratio; checks the bytes are equal.
 */
import { cpus } from 'node:os';
import { encodeFrame, type FrameHeader } from '../../src/frame/codec.js';
import type { Value } from '../../src/metrics/point.js';
import { fleetSamplers, fleetValues } from '../helpers/fleet-shape.js';
import { packFrameObject as objectPack } from '../helpers/frame-pack-old.js';

const rounds = Number(process.argv[2] ?? 5);
const TICKS = 2000;
const samplers = await fleetSamplers();
// values of 8 ticks, reused: the encoders see changing numbers, the bench does not time making them
const ticks = Array.from({ length: 8 }, (_, t) => samplers.map((s) => fleetValues(s, 3, t + 1, 1_795_000_000_000 + t * 1000)));
const header = (name: string, seq: number, descriptor: string): FrameHeader => ({
  host: 'host-0003.example.net',
  sampler: name,
  instance: 1_795_000_000,
  seq,
  beginNs: 1_795_000_000_000_000_000n + BigInt(seq) * 1_000_000_000n,
  endNs: 1_795_000_000_001_000_000n + BigInt(seq) * 1_000_000_000n,
  descriptor,
});

let bytes = 0;
for (const [i, s] of samplers.entries()) {
  const h = header(s.name, 7, s.descriptor.hash);
  const a = encodeFrame(h, ticks[0]?.[i] ?? []);
  const b = objectPack(h, ticks[0]?.[i] ?? []);
  if (Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0) throw new Error(`${s.name}: encodeFrame and msgpackr differ`);
  bytes += a.byteLength;
}

function run(encode: (h: FrameHeader, v: readonly Value[]) => Uint8Array): number {
  const t0 = process.cpuUsage();
  let sink = 0;
  for (let t = 0; t < TICKS; t++) {
    const values = ticks[t % ticks.length] as Value[][];
    for (let i = 0; i < samplers.length; i++) {
      const s = samplers[i];
      if (s === undefined) continue;
      sink += encode(header(s.name, t, s.descriptor.hash), values[i] ?? []).byteLength;
    }
  }
  if (sink === 0) throw new Error('nothing encoded');
  const u = process.cpuUsage(t0);
  return (u.user + u.system) / TICKS;
}

process.stdout.write(`CPU: ${cpus()[0]?.model ?? '?'}; one host tick = ${samplers.length} frames, ${bytes} bytes\n`);
for (let r = 0; r < rounds; r++) {
  const ours = run(encodeFrame);
  const peer = run(objectPack);
  process.stdout.write(`round ${r + 1}: encodeFrame ${ours.toFixed(1)} µs per host tick, msgpackr object ${peer.toFixed(1)} µs: ${(ours / peer).toFixed(2)}x\n`);
}
