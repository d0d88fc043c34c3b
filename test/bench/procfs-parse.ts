/**
 * µs per refresh of the procfs samplers that parse the most text a tick
 * (memory_meminfo, memory_vmstat, network_protocols, network_interfaces,
 * blockio_diskstats), on a copy of this host's files taken once (so the
 * kernel's cost of making the text is left out and every round reads the same
 * bytes), in turns with the same samplers of another tree (--against DIR, its
 * src/ loaded in this process) when given. Run it twice: as is (TurboFan, as
 * the agent runs at 10 Hz) and under `node --no-opt --import tsx` (as it runs at
 * 1 Hz).
 *
 *   npx tsx test/bench/procfs-parse.ts [--refreshes N] [--against ../base]
 *   node --no-opt --import tsx test/bench/procfs-parse.ts --refreshes 300
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { silentLogger } from '../../src/log/logger.js';
import type { Sampler, SamplerDefinition } from '../../src/samplers/types.js';
import { cpuModel, say } from './common.js';

const { values: flags } = parseArgs({ options: { refreshes: { type: 'string' }, against: { type: 'string' }, rounds: { type: 'string' } } });
const N = Number(flags.refreshes ?? 2000);
const ROUNDS = Number(flags.rounds ?? 7);
if (!Number.isInteger(N) || N < 10 || !Number.isInteger(ROUNDS) || ROUNDS < 2) {
  process.stderr.write('usage: npx tsx test/bench/procfs-parse.ts [--refreshes N>=10] [--rounds R>=2] [--against DIR]\n');
  process.exit(2);
}

const SAMPLERS: readonly (readonly [string, string])[] = [
  ['memory/meminfo', 'memoryMeminfoSampler'],
  ['memory/vmstat', 'memoryVmstatSampler'],
  ['network/protocols', 'networkProtocolsSampler'],
  ['network/interfaces', 'networkInterfacesSampler'],
  ['blockio/diskstats', 'blockioDiskstatsSampler'],
];
const FILES = ['meminfo', 'vmstat', 'net/snmp', 'net/netstat', 'net/dev', 'diskstats'];

async function definitions(tree: string): Promise<SamplerDefinition[]> {
  return Promise.all(
    SAMPLERS.map(async ([dir, name]) => {
      const mod = (await import(pathToFileURL(join(tree, 'src', 'samplers', dir, 'sampler.ts')).href)) as Record<string, SamplerDefinition>;
      const d = mod[name];
      if (d === undefined) throw new Error(`${tree}: no ${name} in src/samplers/${dir}/sampler.ts`);
      return d;
    }),
  );
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'rezolus-bench-parse-'));
  try {
    mkdirSync(join(root, 'proc', 'net'), { recursive: true });
    mkdirSync(join(root, 'sys'));
    // read and written, not copied: procfs says its files are empty, and a copy would be
    for (const f of FILES) writeFileSync(join(root, 'proc', f), readFileSync(join('/proc', f)));
    const trees: (readonly [string, string])[] = [['this', resolve(import.meta.dirname, '..', '..')]];
    if (flags.against !== undefined) trees.push(['against', resolve(flags.against)]);
    const samplers = new Map<string, Sampler[]>();
    for (const [label, tree] of trees) {
      const ctx = { procRoot: join(root, 'proc'), sysRoot: join(root, 'sys'), log: silentLogger() };
      samplers.set(label, await Promise.all((await definitions(tree)).map((d) => d.init(ctx))));
    }
    say(`CPU: ${cpuModel()}; node ${process.version}${process.execArgv.includes('--no-opt') ? ' --no-opt' : ''}; ${N} refreshes a round, ${ROUNDS} rounds (the first left out)`);
    const times = new Map<string, number[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, [dir]] of SAMPLERS.entries()) {
        for (const [label] of trees) {
          const s = samplers.get(label)![i]!;
          const t0 = process.hrtime.bigint();
          for (let k = 0; k < N; k++) await s.refresh();
          const us = Number(process.hrtime.bigint() - t0) / N / 1000;
          if (round === 0) continue;
          const key = `${dir} ${label}`;
          (times.get(key) ?? times.set(key, []).get(key)!).push(us);
        }
      }
    }
    const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)]!;
    say('sampler               ' + trees.map(([l]) => `${l} µs`.padStart(12)).join('') + (trees.length > 1 ? '   this / against' : ''));
    for (const [dir] of SAMPLERS) {
      const m = trees.map(([l]) => median(times.get(`${dir} ${l}`)!));
      say(`${dir.padEnd(22)}${m.map((x) => x.toFixed(1).padStart(12)).join('')}${m.length > 1 ? (m[0]! / m[1]!).toFixed(2).padStart(18) : ''}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
