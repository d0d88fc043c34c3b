/**
 * Where one tick of the agent goes, in one process: every sampler of the
 * registry on the live host (procfs, sysfs, BPF), run by the real Agent at
 * its interval with the V8 flags `rezolus agent` would choose for it, and a
 * sink that drops the frames (no NATS). Prints, per tick: each sampler's
 * refresh (CPU of its synchronous part), the agent's emit (layout check,
 * descriptor, values, encoding) and the rest of the main thread (timers,
 * promises, GC on the main thread). Main thread only: this process runs
 * tsx's loader beside it; agent-cpu.ts measures the whole agent.
 *
 *   npx tsx test/bench/agent-tick.ts                   # 1 s ticks, 10 s warm-up, 60 s measured
 *   npx tsx test/bench/agent-tick.ts 30 --interval 100 # 10 Hz
 *   npx tsx test/bench/agent-tick.ts --js-numbers      # the encoder's numbers in JS (no native packer)
 *
 * The parent re-runs this file in a child with the flags `rezolus agent`
 * sets before its code loads; the child sets the rest once loaded, as the
 * CLI does (src/agent/v8-flags.ts), and prints the table.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, type FrameSink } from '../../src/agent/agent.js';
import { useNativeNumberPacker } from '../../src/agent/number-packer.js';
import { applyAgentV8Flags, earlyAgentV8Flags } from '../../src/agent/v8-flags.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { Sampler, SamplerDefinition } from '../../src/samplers/types.js';
import { cpuModel } from './common.js';

const { values: flags, positionals } = parseArgs({
  options: { interval: { type: 'string' }, warmup: { type: 'string' }, child: { type: 'string' }, 'js-numbers': { type: 'boolean' } },
  allowPositionals: true,
});
const SECONDS = Number(positionals[0] ?? 60);
const INTERVAL_MS = Number(flags.interval ?? 1000);
const WARMUP_S = Number(flags.warmup ?? 10);
if (!(SECONDS >= 5 && SECONDS <= 900) || !(INTERVAL_MS >= 10 && INTERVAL_MS <= 60_000) || !(WARMUP_S >= 0 && WARMUP_S <= 300)) {
  process.stderr.write('usage: npx tsx test/bench/agent-tick.ts [SECONDS=60, 5..900] [--interval MS=1000] [--warmup S=10] [--js-numbers]\n');
  process.exit(2);
}

if (flags.child === undefined) {
  // the flags `rezolus agent` sets before its code loads; the child sets the rest once loaded, as the CLI does
  const r = spawnSync(
    process.execPath,
    [...earlyAgentV8Flags(['agent'], process.env), '--import', 'tsx', fileURLToPath(import.meta.url), String(SECONDS), '--interval', String(INTERVAL_MS), '--warmup', String(WARMUP_S), '--child=1', ...(flags['js-numbers'] === true ? ['--js-numbers'] : [])],
    { stdio: 'inherit' },
  );
  process.exit(r.status ?? 1);
}

/** CPU of each thread of this process so far, ms (schedstat's run time). */
function threadMs(): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of readdirSync('/proc/self/task')) {
    try {
      out.set(t, Number(readFileSync(`/proc/self/task/${t}/schedstat`, 'utf8').split(' ')[0]) / 1e6);
    } catch {
      // a thread that ended meanwhile
    }
  }
  return out;
}

const cpuUs = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

const refreshUs = new Map<string, { us: number; n: number }>();
/** The definition with its sampler's refresh timed (the synchronous part: every sampler reads with sync calls). */
function timed(d: SamplerDefinition): SamplerDefinition {
  return {
    ...d,
    async init(ctx) {
      const s = await d.init(ctx);
      const refresh = s.refresh.bind(s);
      const wrapped: Sampler = Object.assign(Object.create(Object.getPrototypeOf(s) as object) as Sampler, s, {
        refresh() {
          const t0 = cpuUs();
          const r = refresh();
          const e = refreshUs.get(d.name) ?? { us: 0, n: 0 };
          e.us += cpuUs() - t0;
          e.n++;
          refreshUs.set(d.name, e);
          return r;
        },
      });
      return wrapped;
    },
  };
}

let emitUs = 0;
const proto = Agent.prototype as unknown as { emit: (...a: unknown[]) => void };
const emit = proto.emit;
proto.emit = function (this: unknown, ...a: unknown[]): void {
  const t0 = cpuUs();
  try {
    emit.apply(this, a);
  } finally {
    emitUs += cpuUs() - t0;
  }
};

const v8Flags = applyAgentV8Flags(process.env, INTERVAL_MS);
// --js-numbers: the encoder writes every number in JS, as before the native packer
const native = flags['js-numbers'] === true ? useNativeNumberPacker([]) : useNativeNumberPacker(v8Flags);
const sink: FrameSink = { publishFrame() {}, putDescriptor() {}, stats: { published: 0, dropped: 0, retries: 0, buffered: 0, bufferedBytes: 0 }, endTick() {} };
const agent = new Agent({
  host: 'bench',
  instance: 1,
  // as agent.toml ships them: the ones with a slower default of their own keep it
  samplers: SAMPLERS.map((d) => ({ definition: timed(d), enabled: true, intervalMs: d.defaultIntervalMs ?? INTERVAL_MS })),
  context: { procRoot: '/proc', sysRoot: '/sys', bpfStats: true },
  sink,
  descriptorTtlMs: 3_600_000,
  log: silentLogger(),
});
await agent.start();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
await sleep(WARMUP_S * 1000);
refreshUs.clear();
emitUs = 0;
const threads0 = threadMs();
const cpu0 = cpuUs();
await sleep(SECONDS * 1000);
const cpu = cpuUs() - cpu0;
const threads1 = threadMs();
await agent.stop();

const ticks = (SECONDS * 1000) / INTERVAL_MS;
const main = (threads1.get(String(process.pid)) ?? 0) - (threads0.get(String(process.pid)) ?? 0);
let helpers = 0;
for (const [t, ms] of threads1) if (t !== String(process.pid)) helpers += ms - (threads0.get(t) ?? 0);
let refreshes = 0;
const rows = [...refreshUs].sort((a, b) => b[1].us / b[1].n - a[1].us / a[1].n);
const f = (x: number): string => x.toFixed(1).padStart(8);
console.log(`CPU: ${cpuModel()}; node ${process.version}; V8 flags: ${v8Flags.join(' ') || '(none)'}; native number packer: ${native}`);
console.log(`every sampler at ${INTERVAL_MS} ms (cpu_perf and rezolus_bpf at their 10 s), ${WARMUP_S} s warm-up, ${SECONDS} s measured (${ticks} ticks), frames dropped`);
console.log('\nsampler                  µs a refresh  refreshes   µs a tick');
for (const [name, e] of rows) {
  refreshes += e.us;
  console.log(`${name.padEnd(24)} ${f(e.us / e.n)}     ${String(e.n).padStart(6)}    ${f(e.us / ticks)}`);
}
console.log('\nthe main thread, µs a tick:');
console.log(`  sampler refreshes          ${f(refreshes / ticks)}`);
console.log(`  the agent's emit           ${f(emitUs / ticks)}   (layout check, descriptor, values, encoding)`);
console.log(`  the rest                   ${f((main * 1000 - refreshes - emitUs) / ticks)}   (timers, promises, the tick, GC on the main thread)`);
console.log(`  in all                     ${f((main * 1000) / ticks)}`);
// this process also runs tsx's loader, so its other threads are not the agent's: agent-cpu.ts measures the real one
console.log(`(other threads of this process, tsx's loader among them: ${f((helpers * 1000) / ticks)} µs a tick; process ${f(cpu / ticks)})`);
process.exit(0);
