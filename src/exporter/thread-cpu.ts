/**
 * CPU time of the calling thread, for the render pacer's floor: the
 * process's own figure (process.cpuUsage) also counts V8's helper threads
 * and worker threads (the Parquet writer of a hindsight dump in `rezolus
 * up`), which would make a cheap render look costly. Node 20 has no
 * per-thread figure, so it is read from procfs: schedstat's time on CPU in
 * ns, or, where the kernel keeps no schedstat, the thread's utime + stime in
 * clock ticks; where neither can be read, the process's.
 */
import { readFileSync } from 'node:fs';

/** Linux's USER_HZ, the unit of utime and stime in stat (100 on every architecture Node runs on). */
const TICKS_PER_S = 100;

/** Time on CPU from a schedstat text ("<ns on cpu> <ns waiting> <slices>"), ms; undefined when it is not one (or all zero: no schedstat kept). */
export function parseSchedstatMs(text: string): number | undefined {
  const first = text.trim().split(/\s+/, 1)[0] ?? '';
  if (!/^\d+$/.test(first)) return undefined;
  const ns = Number(first);
  return ns > 0 ? ns / 1e6 : undefined;
}

/** utime + stime from a /proc stat line, ms; undefined when it is not one. The name in parentheses may hold spaces and parentheses. */
export function parseStatCpuMs(text: string): number | undefined {
  const end = text.lastIndexOf(') ');
  if (end < 0) return undefined;
  // after the name: state (field 3) ... utime (14) and stime (15)
  const fields = text.slice(end + 2).trim().split(/\s+/);
  const utime = fields[11];
  const stime = fields[12];
  if (utime === undefined || stime === undefined || !/^\d+$/.test(utime) || !/^\d+$/.test(stime)) return undefined;
  return ((Number(utime) + Number(stime)) * 1000) / TICKS_PER_S;
}

type Reader = () => number | undefined;

const fromFile = (path: string, parse: (text: string) => number | undefined): Reader => () => {
  try {
    return parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
};

const fromProcess: Reader = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

let chosen: Reader | undefined;

/** The calling thread's CPU time so far, ms, from the first source that answers (chosen once). */
export function threadCpuMs(): number {
  if (chosen === undefined) {
    const sources = [fromFile('/proc/thread-self/schedstat', parseSchedstatMs), fromFile('/proc/thread-self/stat', parseStatCpuMs)];
    chosen = sources.find((s) => s() !== undefined) ?? fromProcess;
  }
  return chosen() ?? 0;
}
