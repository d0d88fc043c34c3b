/**
 * The README's "first ten minutes", run as written: the commands are read
 * from the README itself (the block after its `first-ten-minutes` marker),
 * in a directory of their own, beside a running `rezolus up` (what
 * `npm start` runs once it has built). `npx rezolus` is the real npm exec,
 * finding the package's bin as it does in a clone. Only the exporter's and
 * hindsight's ports are rewritten (up takes free ones here, so that tests
 * running at the same time cannot collide on 4242 and 4243).
 */
import test from 'ava';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../scripts/gen-docs.js';
import { Duck } from '../helpers/duckdb.js';
import { until, within } from '../helpers/until.js';

/** The README's command lines, comments dropped. */
function readmeCommands(): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const at = readme.indexOf('<!-- first-ten-minutes:');
  if (at < 0) throw new Error('README.md has no first-ten-minutes marker');
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(at))?.[1] ?? '';
  return block
    .split('\n')
    .map((l) => l.replace(/\s+#\s.*$/, '').trim())
    .filter((l) => l !== '');
}

interface Run {
  readonly child: ChildProcess;
  out: string;
  readonly exited: Promise<number | null>;
}

function sh(line: string, cwd: string): Run {
  // exec: the exit status is the command's own, not that of a shell a signal ended
  const child = spawn('sh', ['-c', line.includes('|') ? line : `exec ${line}`], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, REZOLUS_NATS_URL: '', REZOLUS_LOG_FORMAT: 'json' }, detached: true });
  const run: Run = { child, out: '', exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal === null ? null : 128)))) };
  child.stdout?.on('data', (d: Buffer) => (run.out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (run.out += d.toString()));
  return run;
}

/** Ctrl-C, as the README says for the commands that keep running: to the whole group (npx, node). */
async function interrupt(run: Run): Promise<number | null> {
  try {
    process.kill(-(run.child.pid as number), 'SIGINT');
  } catch {
    // already gone
  }
  return within(run.exited, 20_000, -1);
}

test('the README\'s first ten minutes work as written', async (t) => {
  t.timeout(240_000);
  const commands = readmeCommands();
  t.is(commands.length, 6, commands.join('\n'));
  // a directory like a clone's: `npx rezolus` finds the package's bin in node_modules/.bin
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-first-ten-'));
  writeFileSync(join(dir, 'package.json'), '{ "name": "first-ten-minutes", "private": true }\n');
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(join(ROOT, 'bin', 'rezolus.js'), join(dir, 'node_modules', '.bin', 'rezolus'));
  const up = sh(`'${process.execPath}' '${join(ROOT, 'dist', 'cli', 'rezolus.js')}' up --nats-port 0 --listen 127.0.0.1:0 --hindsight-listen 127.0.0.1:0`, dir);
  const others: Run[] = [];
  try {
    t.true(await until(() => up.out.includes('Ctrl-C stops everything') || up.child.exitCode !== null, 90_000), `up did not come up:\n${up.out}`);
    const exporterPort = /exporter\s+http:\/\/[^:]+:(\d+)\/metrics/.exec(up.out)?.[1];
    const hindsightPort = /hindsight http:\/\/127\.0\.0\.1:(\d+)\/dump/.exec(up.out)?.[1];
    t.truthy(exporterPort && hindsightPort, up.out);
    const line = (i: number): string => (commands[i] ?? '').replaceAll('localhost:4242', `127.0.0.1:${exporterPort}`).replaceAll('localhost:4243', `127.0.0.1:${hindsightPort}`);
    const finish = async (i: number, ms = 120_000): Promise<Run> => {
      const r = sh(line(i), dir);
      others.push(r);
      await within(r.exited, ms, undefined);
      return r;
    };

    // 1. npx rezolus status
    t.regex(commands[0] ?? '', /^npx rezolus status$/);
    let status = await finish(0);
    // the status record is written at the agent's start; a moment after the banner it is there
    for (let i = 0; i < 10 && !status.out.includes('1 host: 1 ok'); i++) {
      await new Promise((r) => setTimeout(r, 1000));
      status = await finish(0);
    }
    t.is(status.child.exitCode, 0, status.out);
    t.true(status.out.includes('1 host: 1 ok'), status.out);
    t.regex(status.out, /Stream REZOLUS/);

    // 2. the burst view on /metrics
    t.regex(commands[1] ?? '', /^curl -s localhost:4242\/metrics \| grep /);
    let burst = await finish(1);
    for (let i = 0; i < 15 && burst.child.exitCode !== 0; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      burst = await finish(1);
    }
    t.is(burst.child.exitCode, 0, `grep found no burst series: ${burst.out}`);
    t.regex(burst.out, /^cpu_usage_all_seconds_rate\{host="[^"]+",state="\w+",percentile="1"\} [\d.e+-]+$/m);

    // 3. a 10 s recording from the bus
    t.regex(commands[2] ?? '', /^npx rezolus record --duration 10s -o first\.parquet$/);
    const record = await finish(2);
    t.is(record.child.exitCode, 0, record.out);
    const file = join(dir, 'first.parquet');
    t.true(existsSync(file), record.out);
    const duck = await Duck.open();
    const rows = await duck.rows(`SELECT timestamp FROM read_parquet('${file}') ORDER BY timestamp`);
    const stamps = rows.map((r) => Number(r.timestamp as bigint) / 1e6);
    t.true(stamps.length >= 9 && stamps.length <= 11, `${stamps.length} rows`);
    for (let i = 1; i < stamps.length; i++) t.is(Math.round((stamps[i] as number) - (stamps[i - 1] as number)), 1000, `row ${i} is 1 s after the one before`);

    // 4. the viewer of that file: a URL that serves the page, until Ctrl-C
    t.regex(commands[3] ?? '', /^npx rezolus view first\.parquet$/);
    const view = sh(line(3), dir);
    others.push(view);
    t.true(await until(() => /http:\/\/127\.0\.0\.1:\d+\//.test(view.out) || view.child.exitCode !== null, 60_000), view.out);
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(view.out)?.[1] ?? '';
    const page = await fetch(url);
    t.is(page.status, 200);
    t.regex(await page.text(), /<html/i);
    // npx itself dies of the SIGINT (as in a terminal); the viewer under it stops cleanly
    t.true([0, 128, 130].includes((await interrupt(view)) ?? -1), view.out);
    t.true(await until(() => view.out.includes('"msg":"stopping"'), 5000), view.out);

    // 5. a hindsight dump
    t.regex(commands[4] ?? '', /^curl -s -X POST localhost:4243\/dump$/);
    const dump = await finish(4);
    t.is(dump.child.exitCode, 0, dump.out);
    t.regex(dump.out, /hindsight\.parquet/);
    t.true(existsSync(join(dir, 'hindsight.parquet')), dump.out);
    const held = await duck.rows(`SELECT count(*) AS n FROM read_parquet('${join(dir, 'hindsight.parquet')}')`);
    t.true(Number(held[0]?.n) >= 10, `hindsight rows: ${String(held[0]?.n)}`);

    // 6. alert events: what was seen so far, then it follows until Ctrl-C
    t.regex(commands[5] ?? '', /^npx rezolus alert events --since 10m$/);
    const events = sh(line(5), dir);
    others.push(events);
    await new Promise((r) => setTimeout(r, 5000));
    t.is(events.child.exitCode, null, `it follows: ${events.out}`);
    t.true([0, 128, 130].includes((await interrupt(events)) ?? -1), events.out);
    t.false(/error|refused|cannot/i.test(events.out), events.out);
  } finally {
    for (const r of others) if (r.child.exitCode === null) await interrupt(r);
    const code = await interrupt(up);
    t.is(code, 0, `up stopped cleanly: ${up.out.slice(-2000)}`);
    t.false(existsSync(join(dir, 'data', 'up.lock')), 'up released its data directory');
    rmSync(dir, { recursive: true, force: true });
  }
});
