import test from 'ava';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCpuList } from '../../src/samplers/cpu/cores/parse.js';
import { freePort } from '../../src/up/nats-server.js';
import { ROOT } from '../../scripts/gen-docs.js';
import { processAlive } from '../../src/files/lock.js';
import { checkExposition } from '../helpers/exposition-check.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { until, within } from '../helpers/until.js';
import { rezolusArgv } from '../helpers/rezolus-cli.js';

/** Devices this machine has, read the way a user would check them. */
function liveDevices(): { cpus: number[]; netdevs: string[]; disks: string[] } {
  const cpus = parseCpuList(readFileSync('/sys/devices/system/cpu/online', 'utf8')) ?? [];
  const netdevs = readFileSync('/proc/net/dev', 'utf8').split('\n').slice(2).map((l) => l.split(':')[0]?.trim() ?? '').filter((d) => d !== '');
  const disks = readFileSync('/proc/diskstats', 'utf8')
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[2] ?? '')
    .filter((d) => /^(vd|sd|xvd|hd)[a-z]+$|^nvme\d+n\d+$/.test(d));
  return { cpus, netdevs, disks };
}

test('rezolus up on free ports serves this host within 3 s and stops cleanly on Ctrl-C', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-'));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    rezolusArgv('up', '--data-dir', dataDir, '--nats-port', '0', '--listen', `127.0.0.1:${port}`, '--hindsight-listen', '127.0.0.1:0', '--host', 'e2e-live', '--log-level', 'warn'),
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let serverPid: number | undefined;
  try {
    const upDeadline = Date.now() + 20_000;
    while (!stdout.includes('is up') && Date.now() < upDeadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
    t.true(stdout.includes('is up'), `no banner; stderr: ${stderr}`);
    const upAt = Date.now();
    t.regex(stdout, /NATS\s+nats:\/\/127\.0\.0\.1:\d+ \(private nats-server, pid \d+/);
    t.regex(stdout, /stream\s+REZOLUS/);
    t.true(stdout.includes(`exporter  http://127.0.0.1:${port}/metrics`));
    t.regex(stdout, /hindsight http:\/\/127\.0\.0\.1:\d+\/dump \(POST, or kill -HUP \d+\) writes the last 15 min to hindsight\.parquet/);
    serverPid = Number(/pid (\d+)/.exec(stdout)?.[1]);

    const { cpus, netdevs, disks } = liveDevices();
    const wanted = [
      ...cpus.map((c) => new RegExp(`^cpu_usage_seconds_total\\{host="e2e-live",state="user",id="${c}"\\} `, 'm')),
      /^memory_total_bytes\{host="e2e-live"\} [1-9]\d*$/m,
      ...netdevs.map((d) => new RegExp(`^network_device_bytes_total\\{host="e2e-live",device="${d}",direction="receive"\\} \\d+$`, 'm')),
      ...disks.map((d) => new RegExp(`^blockio_device_operations_total\\{host="e2e-live",device="${d}",op="read"\\} \\d+$`, 'm')),
    ];
    let text = '';
    let firstFullMs = -1;
    while (Date.now() - upAt < 10_000) {
      text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
      if (wanted.every((re) => re.test(text))) {
        firstFullMs = Date.now() - upAt;
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    t.log(`first complete exposition ${firstFullMs} ms after the banner (${cpus.length} CPUs, net ${netdevs.join(',')}, disks ${disks.join(',')})`);
    for (const re of wanted) t.regex(text, re);
    t.true(firstFullMs >= 0 && firstFullMs <= 3000, `metrics took ${firstFullMs} ms`);
    // the burst view with plain `up`: the cpu, network and disk counters sampled every 100 ms, scraped at 1 s
    t.regex(stdout, /bursts\s+blockio_diskstats, cpu_usage, network_interfaces sample every 100ms: <family>_rate\{percentile="1"\} on \/metrics is the fastest 100ms within each 1s scrape/);
    const burst = /^cpu_usage_all_seconds_rate\{host="e2e-live",state="user",percentile="1"\} [\d.e+-]+$/m;
    t.true(await until(async () => burst.test((text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => ''))), 10_000), 'the burst view is served');
    t.deepEqual(checkExposition(text), []);
    const lint = promtoolCheck(text);
    t.is(lint?.status, 0, lint?.output);

    child.kill('SIGINT');
    const code = await within(exited, 10_000, 'timeout');
    t.is(code, 0, `exit code; stderr: ${stderr}`);
    t.false(processAlive(serverPid), 'the private nats-server was stopped');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    // a killed `up` cannot stop its private server: do it here, so no test leaves one running
    if (serverPid !== undefined && processAlive(serverPid)) process.kill(serverPid, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});
