/**
 * A procfs/sysfs fixture root for N CPUs, for cpu-scaling.ts: a copy of
 * test/fixtures/rootfs (2 CPUs) with /proc/stat, /proc/softirqs and
 * /sys/devices/system/cpu rewritten for N CPUs. Counter values are made up
 * but plausible (every CPU distinct), so parsers do the work they do on a
 * real host of that size.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const SOFTIRQS = ['HI', 'TIMER', 'NET_TX', 'NET_RX', 'BLOCK', 'IRQ_POLL', 'TASKLET', 'SCHED', 'HRTIMER', 'RCU'];

/** Writes the root for `cpus` CPUs at `dest` from the 2-CPU fixture at `source`. */
export function writeCpuFixture(source: string, dest: string, cpus: number): void {
  cpSync(source, dest, { recursive: true });
  const stat = readFileSync(join(source, 'proc', 'stat'), 'utf8').split('\n');
  const tail = stat.filter((l) => !l.startsWith('cpu'));
  const perCpu: number[][] = [];
  for (let c = 0; c < cpus; c++) perCpu.push([2000 + 37 * c, 3 * c, 1100 + 13 * c, 25_000 + 101 * c, 16 + c, 0, 15 + (c % 7), 3, 0, 0]);
  const all = perCpu.reduce((s, v) => s.map((x, i) => x + (v[i] as number)), new Array<number>(10).fill(0));
  const lines = [`cpu  ${all.join(' ')}`, ...perCpu.map((v, c) => `cpu${c} ${v.join(' ')}`), ...tail];
  writeFileSync(join(dest, 'proc', 'stat'), lines.join('\n'));
  const head = `${' '.repeat(10)}${Array.from({ length: cpus }, (_, c) => `CPU${c}`.padStart(11)).join('')}`;
  const rows = SOFTIRQS.map((k, i) => `${`${k}:`.padStart(9)} ${Array.from({ length: cpus }, (_, c) => String(1000 * i + c).padStart(10)).join(' ')}`);
  writeFileSync(join(dest, 'proc', 'softirqs'), `${head}\n${rows.join('\n')}\n`);
  const cpuDir = join(dest, 'sys', 'devices', 'system', 'cpu');
  writeFileSync(join(cpuDir, 'online'), `0-${cpus - 1}\n`);
  writeFileSync(join(cpuDir, 'possible'), `0-${cpus - 1}\n`);
  writeFileSync(join(cpuDir, 'present'), `0-${cpus - 1}\n`);
  for (let c = 0; c < cpus; c++) {
    const topo = join(cpuDir, `cpu${c}`, 'topology');
    mkdirSync(topo, { recursive: true });
    writeFileSync(join(topo, 'core_id'), `${c >> 1}\n`);
    writeFileSync(join(topo, 'physical_package_id'), `${c >= cpus / 2 && cpus > 2 ? 1 : 0}\n`);
    writeFileSync(join(cpuDir, `cpu${c}`, 'online'), '1\n');
  }
}
