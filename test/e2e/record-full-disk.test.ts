import test from 'ava';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { SimFleet } from '../helpers/sim-fleet.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const PERIOD_NS = 100_000_000n;
const root = process.getuid?.() === 0;

let server: TestNats;
let fleet: SimFleet;
let dir: string;
let mnt: string;
let mounted = false;
let publisher: NodeJS.Timeout | undefined;

test.before(async () => {
  if (!root) return;
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-full-disk-'));
  mnt = join(dir, 'mnt');
  mkdirSync(mnt);
  // a 256 KiB tmpfs, all but one page taken: any recording overflows it
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mnt]);
  mounted = true;
  try {
    writeFileSync(join(mnt, 'filler'), Buffer.alloc(252 * 1024));
  } catch {
    // as full as it gets
  }
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'sim', natsUrl: server.url });
  const now = BigInt(Date.now()) * 1_000_000n;
  fleet = await SimFleet.start({ natsUrl: server.url, hosts: 20, agent, samplers: ['cpu_usage', 'memory_meminfo'], startNs: now - (now % PERIOD_NS), periodNs: PERIOD_NS });
  let tick = 0;
  publisher = setInterval(() => void fleet.publishTick(++tick), 100);
  await new Promise((r) => setTimeout(r, 1500));
});

test.after.always(async () => {
  if (publisher !== undefined) clearInterval(publisher);
  await fleet?.close();
  await server?.dispose();
  if (mounted) execFileSync('umount', [mnt]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

function rezolus(args: readonly string[]): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, rezolusArgv(...args, '--nats', server.url, '--log-level', 'warn'), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stderr })));
}

const maybe = root ? test.serial : test.skip;

maybe('hindsight snapshot on a full disk: a one-line error naming the file and ENOSPC, exit 1, nothing left behind', async (t) => {
  const out = join(mnt, 'snap.parquet');
  const r = await rezolus(['hindsight', 'snapshot', '--last', '1s', '--hosts', 'sim-*', '--interval', '100ms', '-o', out]);
  t.is(r.code, 1, r.stderr);
  const lines = r.stderr.trim().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.is(lines[0], `rezolus hindsight: cannot write ${out}: ENOSPC (no space left on device)`);
  t.deepEqual(readdirSync(mnt), ['filler'], 'neither the file nor its temporary');
});

maybe('record on a full disk: the same, at the end of a live recording', async (t) => {
  const out = join(mnt, 'live.parquet');
  const r = await rezolus(['record', '--hosts', 'sim-*', '--interval', '100ms', '--duration', '1500ms', '-o', out]);
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr.trim(), new RegExp(`^rezolus record: cannot write ${out}: ENOSPC \\(no space left on device\\)$`));
  t.deepEqual(readdirSync(mnt), ['filler']);
});

maybe('record --durable on a full disk: a one-line error naming the spool and ENOSPC, exit 1, no Parquet file', async (t) => {
  const out = join(mnt, 'durable.parquet');
  const r = await rezolus(['record', '--durable', 'full', '--hosts', 'sim-*', '--interval', '100ms', '--duration', '2s', '-o', out]);
  t.is(r.code, 1, r.stderr);
  t.regex(r.stderr.trim(), new RegExp(`^rezolus record: cannot write ${out}\\.spool: ENOSPC \\(no space left on device\\)$`));
  // the spool, cut to whole records, is what a restart resumes from once there is room; nothing else stays
  t.deepEqual(readdirSync(mnt).filter((f) => f !== 'durable.parquet.spool'), ['filler']);
});
