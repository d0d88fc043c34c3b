/**
 * Frames of three samplers at different rates, for the recorder's tests:
 * cpu every 100 ms (a counter whose value is the ms since T0), memory every
 * 1 s (a gauge of 1e9 minus those ms), latency every 500 ms (a histogram
 * whose bucket 36 counts the latency ticks so far).
 */
import type { Frame } from '../../src/frame/types.js';
import { T0, h, m, makeDescriptor, makeFrame } from './frames.js';

const MS = 1_000_000n;
export const cpu = makeDescriptor('cpu_usage', { cpu_usage: m('counter', 'nanoseconds', ['state'], 'CPU time') }, [['cpu_usage', ['user']]]);
export const mem = makeDescriptor('memory', { memory_free: m('gauge', 'bytes', [], 'Free memory') }, [['memory_free', []]]);
export const lat = makeDescriptor('latency', { syscall_latency: m('histogram', 'nanoseconds', [], 'Syscall latency') }, [['syscall_latency', []]]);

/** The three samplers' frames of `host` from `fromMs` to `toMs` after T0. */
export function mixedFrames(host: string, fromMs: number, toMs: number): Frame[] {
  const out: Frame[] = [];
  for (let t = fromMs; t <= toMs; t += 100) {
    const endNs = T0 + BigInt(t) * MS;
    out.push(makeFrame({ host, descriptor: cpu, seq: t / 100 + 1, endNs, values: [t] }));
    if ((t - fromMs) % 1000 === 0) out.push(makeFrame({ host, descriptor: mem, seq: t / 1000 + 1, endNs, values: [1e9 - t] }));
    if ((t - fromMs) % 500 === 0) out.push(makeFrame({ host, descriptor: lat, seq: t / 500 + 1, endNs, values: [h([36, t / 500 + 1])] }));
  }
  return out;
}
