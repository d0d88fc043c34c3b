/**
 * Issue 7, part 6, as a user meets it: each process started with a bad
 * config file, or against a stream it cannot use, says what is wrong in one
 * line on stderr and exits non-zero; an agent whose NATS does not answer
 * yet says so once and keeps waiting (agents may start before the bus).
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager, StorageType } from '@nats-io/jetstream';
import { connectBus } from '../../src/bus/connect.js';
import { silentLogger } from '../../src/log/logger.js';
import { freePort } from '../../src/up/nats-server.js';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

const TMP = mkdtempSync(join(tmpdir(), 'rezolus-bad-config-'));
let server: TestNats | undefined;
test.after.always(async () => {
  await server?.dispose();
  rmSync(TMP, { recursive: true, force: true });
});

interface Run {
  readonly code: number | null;
  readonly stderr: string;
}

/**
 * Runs the CLI until it exits, or kills it after `killAfterMs` (code null); with `settled`, kills
 * it `killAfterMs` after its stderr first satisfies `settled` instead (a loaded machine may take
 * seconds to start it), or after 60 s.
 */
function rezolus(args: readonly string[], killAfterMs = 20_000, settled?: (stderr: string) => boolean): Promise<Run> {
  const child = spawn(process.execPath, rezolusArgv(...args), { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  let timer = setTimeout(() => child.kill('SIGKILL'), settled === undefined ? killAfterMs : 60_000);
  child.stderr.on('data', (d: Buffer) => {
    const before = settled?.(stderr) ?? true;
    stderr += d.toString();
    if (!before && settled?.(stderr) === true) {
      clearTimeout(timer);
      timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    }
  });
  return new Promise((resolve) =>
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    }),
  );
}

function file(name: string, text: string): string {
  const path = join(TMP, name);
  writeFileSync(path, text);
  return path;
}

const CASES: readonly [string, string, string, RegExp][] = [
  ['agent', 'invalid TOML', '[general\nhost = "a"\n', /is not valid TOML: illegal character in key at line 1, column 9/],
  ['agent', 'an unknown key', '[stream]\nmax_agee = "15m"\n', /unknown key \[stream\] max_agee/],
  ['agent', 'a bad duration', '[defaults]\ninterval = "1 sec"\n', /\[defaults\] interval must be a duration .*"1 sec"/],
  ['exporter', 'a bad duration', '[general]\nforget_after = "soon"\n', /\[general\] forget_after must be a duration/],
  ['hindsight', 'an unknown section', '[dump]\nevery = "1m"\n', /unknown section \[dump\]/],
  ['agent', 'a seed file that does not exist', '[nats]\nnkey_seed_file = "/nonexistent/agent.nk"\n', /nkey_seed_file/],
];

for (const [mode, what, text, message] of CASES) {
  test(`rezolus ${mode} with ${what} in its config exits 2 with one line naming it`, async (t) => {
    const path = file(`${mode}-${what.replace(/\W+/g, '-')}.toml`, text);
    // nothing answers on port 1: the config must be refused before any connect
    const r = await rezolus([mode, '--config', path, '--nats', 'nats://127.0.0.1:1']);
    t.is(r.code, 2, r.stderr);
    const lines = r.stderr.trimEnd().split('\n');
    t.is(lines.length, 1, `one line: ${r.stderr}`);
    t.regex(lines[0] ?? '', message);
    t.true((lines[0] ?? '').includes(path), 'the line names the file');
  });
}

test('an agent against a stream whose settings conflict exits non-zero with one line naming each conflict', async (t) => {
  server = await startTestNats();
  const nc = await connectBus({ url: server.url, name: 'setup', log: silentLogger() });
  await (await jetstreamManager(nc)).streams.add({ name: 'REZOLUS', subjects: ['rezolus.metrics.>'], storage: StorageType.Memory });
  await nc.close();
  const r = await rezolus(['agent', '--nats', server.url, '--host', 'conflict', '--log-level', 'silent']);
  t.not(r.code, 0);
  t.not(r.code, null, 'it exits on its own');
  const lines = r.stderr.trimEnd().split('\n');
  t.is(lines.length, 1, r.stderr);
  t.regex(lines[0] ?? '', /stream REZOLUS exists with settings rezolus cannot use: storage is "memory", rezolus needs "file"/);
});

test('an agent whose NATS does not answer says so once and keeps waiting', async (t) => {
  const port = await freePort();
  // it retries every second: 3 s after the first warning, a repeated one would be there
  const r = await rezolus(['agent', '--nats', `nats://127.0.0.1:${port}`, '--host', 'early', '--log-level', 'warn'], 3000, (e) => e.includes('does not answer'));
  t.is(r.code, null, 'still running (waiting) when killed');
  const warnings = r.stderr.trim().split('\n').filter((l) => l.includes('does not answer'));
  t.is(warnings.length, 1, r.stderr);
  t.regex(warnings[0] ?? '', new RegExp(`127\\.0\\.0\\.1:${port}`));
});
