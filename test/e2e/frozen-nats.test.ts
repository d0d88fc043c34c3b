/**
 * A NATS server that accepts connections and never answers (stopped with
 * SIGSTOP, a hung host): the one-shot commands say so and exit non-zero,
 * instead of printing the error and staying alive with the connection open.
 */
import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestNats, type TestNats } from '../helpers/nats.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';
import { within } from '../helpers/until.js';

let server: TestNats;
let dir: string;

test.before(async () => {
  server = await startTestNats();
  dir = mkdtempSync(join(tmpdir(), 'rezolus-frozen-'));
  server.process.kill('SIGSTOP');
});

test.after.always(async () => {
  server.process.kill('SIGCONT');
  await server.dispose();
  rmSync(dir, { recursive: true, force: true });
});

for (const args of [
  ['status'],
  ['status', '--json'],
  ['record', '--duration', '5s', '--host', 'x', '-o', 'OUT'],
  ['hindsight', 'snapshot', '--last', '1m', '-o', 'OUT'],
  ['alert', 'events', '--since', '1m'],
]) {
  test(`rezolus ${args.join(' ')} against a NATS that never answers exits 1 with the reason`, async (t) => {
    t.timeout(150_000);
    const argv = rezolusArgv(...args.map((a) => (a === 'OUT' ? join(dir, 'x.parquet') : a)), '--nats', server.url);
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await within(new Promise<number | null>((r) => child.once('exit', (c) => r(c))), 120_000, 'still running after 120 s');
    if (child.exitCode === null) child.kill('SIGKILL');
    t.is(code, 1, stderr);
    const last = stderr.trim().split('\n').at(-1) ?? '';
    t.regex(last, /^rezolus \w+: cannot connect to NATS at nats:\/\/127\.0\.0\.1:\d+: TimeoutError: timeout \(the port accepted the connection but no NATS greeting came in time/, stderr);
    t.is(last.split('cannot connect').length, 2, 'said once');
  });
}
