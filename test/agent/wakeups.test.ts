import test from 'ava';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PROC, SYS } from '../helpers/fixtures.js';
import { startTestNats } from '../helpers/nats.js';
import { ROOT, rezolusArgv } from '../helpers/rezolus-cli.js';

const STRACE = '/usr/bin/strace';
const SECONDS = 6;

/**
 * The event loop's sleeps of a running `rezolus agent` (procfs samplers on
 * the fixture root, 1 s) over SECONDS, from strace of its main thread: each
 * epoll_pwait with a timeout is a sleep; one that returns 0 was ended by a
 * timer, one that returns events by the socket (the acks, when they were
 * not already there).
 */
async function agentSleeps(): Promise<{ timer: number; io: number; lines: string[] }> {
  const server = await startTestNats();
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-wakeups-test-'));
  const config = join(dir, 'agent.toml');
  writeFileSync(config, '[kernel]\nenabled = false\n[http]\nenabled = false\n[samplers.cgroup_resources]\nenabled = false\n');
  const child = spawn(process.execPath, rezolusArgv('agent', '--config', config, '--nats', server.url, '--host', 'wakeups', '--procfs', PROC, '--sysfs', SYS, '--log-level', 'info'), {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      let text = '';
      const timer = setTimeout(() => reject(new Error(`no "agent running" line within 60 s: ${text}`)), 60_000);
      child.stderr.on('data', (d: Buffer) => {
        text += d.toString();
        if (!text.includes('"agent running"')) return;
        clearTimeout(timer);
        resolve();
      });
      child.once('exit', (code) => reject(new Error(`the agent exited ${code}: ${text}`)));
    });
    // past start-up (stream, buckets, the first descriptors)
    await new Promise((r) => setTimeout(r, 2500));
    const out = join(dir, 'strace.txt');
    const r = spawnSync('timeout', ['-s', 'INT', String(SECONDS), STRACE, '-o', out, '-e', 'trace=epoll_wait,epoll_pwait,epoll_pwait2', '-p', String(child.pid)], { encoding: 'utf8' });
    if (!existsSync(out)) throw new Error(`strace wrote nothing: ${r.stderr}`);
    const lines = readFileSync(out, 'utf8').split('\n').filter((l) => /^epoll_p?wait2?\(/.test(l));
    // epoll_pwait(13, [...], 1024, <timeout>, NULL, 8) = <n>; a timeout of 0 is a poll, not a sleep
    const sleeps = lines.map((l) => /, (-?\d+)(?:, NULL, \d+)?\) = (\d+)/.exec(l)).filter((m) => m !== null && m[1] !== '0');
    return { timer: sleeps.filter((m) => m?.[2] === '0').length, io: sleeps.filter((m) => m?.[2] !== '0').length, lines };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => (child.exitCode === null ? child.once('exit', r) : r(undefined)));
    await server.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

test('at 1 s the agent is woken by a timer about once a second, for its tick: no timer of its own wakes it between ticks', async (t) => {
  t.true(existsSync(STRACE), `${STRACE} is missing (Debian package strace; npm test installs it as root)`);
  const { timer, io, lines } = await agentSleeps();
  t.log(`${SECONDS} s: ${timer} sleeps ended by a timer, ${io} by the socket`);
  // a tick a second, plus the store keeper's check every 5 s and a status write every 10 s; before
  // 2026-11-29 the ack sweep (every 250 ms) and a tick timer that fired a hair early and was set
  // again made 5-6 timer wake-ups a second
  t.true(timer >= SECONDS - 1, `the ticks themselves: ${timer}\n${lines.join('\n')}`);
  t.true(timer <= SECONDS + 3, `${timer} timer wake-ups in ${SECONDS} s\n${lines.join('\n')}`);
});
