/**
 * Two `rezolus up` in one directory, as a user would start them: the second
 * is refused with the first one's pid, and the first goes on with its bus.
 * A hindsight output nobody can write is refused at start.
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { processAlive } from '../../src/files/lock.js';
import { natsAnswers } from '../../src/up/nats-server.js';
import { rezolusArgv, runRezolus } from '../helpers/rezolus-cli.js';
import { until, within } from '../helpers/until.js';

/** An up.toml beside an agent.toml without the kernel samplers (no BPF: the test is about up itself). */
function configDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-up-twice-'));
  writeFileSync(join(dir, 'agent.toml'), '[kernel]\nenabled = false\n[http]\nenabled = false\n');
  writeFileSync(join(dir, 'up.toml'), '[general]\nalerts_config = ""\n');
  return dir;
}

function startUp(dir: string, ...extra: string[]): { child: ChildProcess; out: () => string; exited: Promise<number | null> } {
  const child = spawn(
    process.execPath,
    [...rezolusArgv('up', '--config', join(dir, 'up.toml'), '--data-dir', join(dir, 'data'), '--nats-port', '0', '--listen', '127.0.0.1:0', '--hindsight-listen', '127.0.0.1:0', '--view-listen', 'off', '--host', 'twice', '--log-level', 'warn', ...extra)],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, out: () => out, exited };
}

test('a second up in the same data directory is refused with the pid of the first, which keeps its nats-server', async (t) => {
  t.timeout(90_000);
  const dir = configDir();
  const first = startUp(dir);
  let serverPid: number | undefined;
  try {
    t.true(await until(() => first.out().includes('is up') || first.child.exitCode !== null, 60_000), 'the first is up');
    t.true(first.out().includes('is up'), first.out());
    serverPid = Number(/private nats-server, pid (\d+)/.exec(first.out())?.[1]);
    const port = Number(/NATS\s+nats:\/\/127\.0\.0\.1:(\d+)/.exec(first.out())?.[1]);

    const second = startUp(dir);
    const code = await within(second.exited, 60_000, 'still running');
    if (second.child.exitCode === null) second.child.kill('SIGKILL');
    t.is(code, 1, second.out());
    t.true(second.out().includes(`is in use by another rezolus up (pid ${first.child.pid}, NATS nats://127.0.0.1:${port})`), second.out());
    t.false(second.out().includes('stopped nats-server'), 'the first one\'s server was left alone');

    t.true(processAlive(serverPid), 'the first one\'s nats-server still runs');
    t.is(Number(readFileSync(join(dir, 'data', 'nats-server.pid'), 'utf8')), serverPid);
    t.true(await natsAnswers('127.0.0.1', port), 'and answers');
    t.is(first.child.exitCode, null, 'the first is still up');

    first.child.kill('SIGINT');
    t.is(await first.exited, 0, first.out());
    t.false(processAlive(serverPid), 'its server stopped with it');
  } finally {
    if (first.child.exitCode === null) first.child.kill('SIGKILL');
    if (serverPid !== undefined && processAlive(serverPid)) process.kill(serverPid, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('hindsight refuses at start an output directory that does not exist, naming it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-hindsight-out-'));
  try {
    mkdirSync(join(dir, 'exists'));
    const r = await runRezolus('hindsight', '--nats', 'nats://127.0.0.1:1', '-o', join(dir, 'missing', 'h.parquet'), '--listen', '127.0.0.1:0');
    t.is(r.code, 2, r.stderr);
    t.true(r.stderr.includes(`hindsight output ${join(dir, 'missing', 'h.parquet')}: directory ${join(dir, 'missing')} does not exist`), r.stderr);
    const proc = await runRezolus('hindsight', '--nats', 'nats://127.0.0.1:1', '-o', '/proc/h.parquet', '--listen', '127.0.0.1:0');
    t.is(proc.code, 2, proc.stderr);
    t.regex(proc.stderr, /hindsight output \/proc\/h\.parquet: \/proc cannot be written/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('view refuses at start a --save-dir it cannot write to, naming it', async (t) => {
  const r = await runRezolus('view', '--nats', 'nats://127.0.0.1:1', '--save-dir', '/nonexistent-rezolus-dir');
  t.is(r.code, 2, r.stderr);
  t.true(r.stderr.includes('--save-dir /nonexistent-rezolus-dir: directory /nonexistent-rezolus-dir does not exist'), r.stderr);
});

test('up refuses a hindsight output directory that does not exist before it starts anything', async (t) => {
  const dir = configDir();
  try {
    writeFileSync(join(dir, 'hindsight.toml'), `[general]\noutput = "${join(dir, 'missing', 'h.parquet')}"\n`);
    const r = await runRezolus('up', '--config', join(dir, 'up.toml'), '--data-dir', join(dir, 'data'), '--nats-port', '0', '--listen', '127.0.0.1:0', '--hindsight-listen', '127.0.0.1:0', '--view-listen', 'off');
    t.is(r.code, 2, r.stderr);
    t.true(r.stderr.includes(`hindsight output ${join(dir, 'missing', 'h.parquet')}: directory ${join(dir, 'missing')} does not exist (set [general] output in ${join(dir, 'hindsight.toml')})`), r.stderr);
    t.false(r.stderr.includes('started a private nats-server'), 'nothing was started');
    t.false(existsSync(join(dir, 'data', 'jetstream')), 'no store was made');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
