import test from 'ava';
import { rezolusArgv } from '../helpers/rezolus-cli.js';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { createLogger } from '../../src/log/logger.js';
import { humanLine, wantsHumanLogs } from '../../src/log/human.js';
import { RezolusError } from '../../src/errors.js';

const AT = new Date(2026, 10, 26, 4, 5, 6, 7).getTime();

test('a record as one human line: time, level, where, message, then the other fields as key=value', (t) => {
  const line = humanLine({ level: 40, time: AT, pid: 7, name: 'rezolus', process: 'agent', component: 'http', msg: 'cannot serve', listen: '127.0.0.1:4241', n: 3, ok: false, hosts: ['a', 'b'], why: 'two words' });
  t.is(line, '04:05:06.007 WARN  agent/http  cannot serve  listen=127.0.0.1:4241 n=3 ok=false hosts=["a","b"] why="two words"');
});

test('an error shows its class, code and message; its stack only from level error up', (t) => {
  const records: Record<string, unknown>[] = [];
  const log = createLogger('info', 'rezolus', { write: (s: string) => void records.push(JSON.parse(s) as Record<string, unknown>) });
  log.warn({ err: new RezolusError('LOCKED', 'in use') }, 'refused');
  log.error({ err: new Error('boom') }, 'failed');
  const warn = humanLine(records[0] as Record<string, unknown>);
  t.regex(warn, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}refused {2}RezolusError LOCKED: in use$/);
  const error = humanLine(records[1] as Record<string, unknown>);
  t.regex(error, /^\d\d:\d\d:\d\d\.\d{3} ERROR failed {2}Error: boom\n\s+at /);
});

test('colour only when asked: the level label wrapped in an ANSI colour and a reset', (t) => {
  t.is(humanLine({ level: 50, time: AT, msg: 'x' }, true), '04:05:06.007 \x1b[31mERROR\x1b[0m x');
  t.false(humanLine({ level: 50, time: AT, msg: 'x' }, false).includes('\x1b'));
});

test('human on a terminal, JSON elsewhere; REZOLUS_LOG_FORMAT decides over both', (t) => {
  t.true(wantsHumanLogs({}, true));
  t.false(wantsHumanLogs({}, false));
  t.false(wantsHumanLogs({ REZOLUS_LOG_FORMAT: 'json' }, true));
  t.true(wantsHumanLogs({ REZOLUS_LOG_FORMAT: 'human' }, false));
});

/** The first stderr of `rezolus agent` against a NATS that does not answer, with stderr a pipe (or, through script(1), a terminal). */
function firstLogs(viaTerminal: boolean): Promise<string> {
  const argv = [process.execPath, ...rezolusArgv('agent', '--nats', 'nats://127.0.0.1:1', '--host', 'logfmt', '--procfs', join(ROOT, 'test/fixtures/rootfs/proc'))];
  const child = viaTerminal
    ? spawn('script', ['-qec', argv.map((a) => `'${a}'`).join(' '), '/dev/null'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', REZOLUS_LOG_FORMAT: '' } })
    : spawn(argv[0] as string, argv.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REZOLUS_LOG_FORMAT: '' } });
  let out = '';
  return new Promise((resolve) => {
    // cleared once done: a pending timer would keep the test process alive for its whole minute
    const timer = setTimeout(() => done(), 60_000);
    const done = (): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve(out);
    };
    const take = (d: Buffer): void => {
      out += d.toString();
      if (/does not answer/.test(out)) done();
    };
    child.stdout?.on('data', take);
    child.stderr?.on('data', take);
  });
}

test('the CLI logs human lines to a terminal and JSON lines to a pipe', async (t) => {
  const piped = await firstLogs(false);
  const json = piped.split('\n').filter((l) => l.startsWith('{'));
  t.true(json.length > 0, piped);
  t.is((JSON.parse(json[0] as string) as { name: string }).name, 'rezolus');
  const tty = await firstLogs(true);
  t.regex(tty, /^\d\d:\d\d:\d\d\.\d{3} WARN {2}nats {2}NATS does not answer yet; retrying every second/m);
  t.false(tty.includes('{"level"'), tty);
  t.false(tty.includes('\x1b['), 'NO_COLOR is honoured');
});
