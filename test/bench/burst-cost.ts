/**
 * What the burst view of plain `npm start` costs the agent: two compiled
 * agents side by side in the same window, publishing to one private
 * nats-server, one with every sampler at 1 s (the fleet default of
 * agent.toml), the other as `rezolus up` runs it (the samplers behind the
 * exporter's [oversample] metrics at up.toml's oversample_interval, 100 ms).
 * Running both at once puts the same noise on both: the ratio is the figure.
 *
 *   npx tsx test/bench/burst-cost.ts        # 60 s
 *   npx tsx test/bench/burst-cost.ts 20     # quick check
 *
 * CPU is utime+stime of each agent between t=10 s (after warm-up) and the end;
 * RSS is VmRSS at the end. Frames per second are counted from the stream.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadUpConfig } from '../../src/config/up.js';
import { formatDuration } from '../../src/config/units.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import { startNatsServer } from '../../src/up/nats-server.js';
import {
  CLK_TCK, cpuModel, cpuTicks, ENTRY, ensureBuilt, fmt, hostSubjectCounts, memKiB, NATS_SERVER_BIN, ROOT, say, sleep, spawnAgent, stopChild,
  writeAgentConfig,
} from './common.js';

const DURATION_S = Number(process.argv[2] ?? 60);
const WARMUP_S = 10;
if (!Number.isInteger(DURATION_S) || DURATION_S < WARMUP_S + 5) {
  process.stderr.write(`burst-cost: duration must be a whole number of seconds >= ${WARMUP_S + 5}\n`);
  process.exit(2);
}

ensureBuilt();
const up = loadUpConfig(join(ROOT, 'config', 'up.toml'), undefined);
const oversampleMs = up.oversampleIntervalMs ?? 100;
const wanted = new Set(loadExporterConfig(join(ROOT, 'config', 'exporter.toml')).oversampleMetrics);
const burstSamplers = SAMPLERS.filter((s) => s.metrics.some((m) => wanted.has(m.name))).map((s) => s.name);

const dir = mkdtempSync(join(tmpdir(), 'rezolus-burst-cost-'));
// agent.toml's samplers at their default intervals ([kernel] on), HTTP off for both
const plainSamplers = new Map(SAMPLERS.map((s) => [s.name, formatDuration(s.defaultIntervalMs ?? 1000)]));
const burstIntervals = new Map([...plainSamplers].map(([name, iv]) => [name, burstSamplers.includes(name) ? `${oversampleMs}ms` : iv]));
writeAgentConfig(join(dir, 'plain.toml'), ROOT, { samplers: plainSamplers });
writeAgentConfig(join(dir, 'burst.toml'), ROOT, { samplers: burstIntervals });

const server = await startNatsServer({ binary: NATS_SERVER_BIN, port: 0, dataDir: join(dir, 'nats') });
const children: ChildProcess[] = [];
const stopAll = async (): Promise<void> => {
  for (const c of children) await stopChild(c);
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
};
process.once('SIGINT', () => void stopAll().then(() => process.exit(130)));
try {
  const start = (host: string, config: string): ChildProcess => {
    const c = spawnAgent({ entry: ENTRY, natsUrl: server.url, host, config: join(dir, config) });
    c.stderr?.pipe(process.stderr);
    children.push(c);
    return c;
  };
  const plain = start('plain', 'plain.toml');
  const withBurst = start('burst', 'burst.toml');
  await sleep(WARMUP_S * 1000);
  const nc = await connect({ servers: server.url });
  const jsm = await jetstreamManager(nc);
  const count = async (host: string): Promise<number> => [...(await hostSubjectCounts(jsm, host)).values()].reduce((a, b) => a + b, 0);
  const t0 = Date.now();
  const c0 = [cpuTicks(plain.pid as number), cpuTicks(withBurst.pid as number)];
  const m0 = [await count('plain'), await count('burst')];
  await sleep((DURATION_S - WARMUP_S) * 1000);
  const seconds = (Date.now() - t0) / 1000;
  const c1 = [cpuTicks(plain.pid as number), cpuTicks(withBurst.pid as number)];
  const m1 = [await count('plain'), await count('burst')];
  const rss = [memKiB(plain.pid as number).rss, memKiB(withBurst.pid as number).rss];
  await nc.close();
  const pct = (i: number): number => (((c1[i] as number) - (c0[i] as number)) / CLK_TCK / seconds) * 100;
  const fps = (i: number): number => ((m1[i] as number) - (m0[i] as number)) / seconds;
  say(`CPU: ${cpuModel()}; ${fmt(seconds, 0)} s after ${WARMUP_S} s warm-up, both agents at once`);
  say(`burst samplers (${burstSamplers.join(', ')}) at ${oversampleMs} ms, the rest at 1 s:`);
  say(`  agent.toml's intervals : ${fmt(pct(0))} % of a core, RSS ${fmt(rss[0] as number / 1024, 0)} MiB, ${fmt(fps(0), 1)} frames/s`);
  say(`  as rezolus up runs it  : ${fmt(pct(1))} % of a core, RSS ${fmt(rss[1] as number / 1024, 0)} MiB, ${fmt(fps(1), 1)} frames/s`);
  say(`  ratio                  : ${fmt(pct(1) / pct(0))} x CPU, +${fmt(pct(1) - pct(0))} points of a core`);
} finally {
  await stopAll();
}
