/**
 * CPU burners for the alerting end-to-end test: `count` busy loops
 * (`while :; do :; done`, no syscalls) forked by one `sh`, under
 * `timeout -s KILL`, in a session and process group of their own.
 *
 * - Killed as a group, by the group's id (the `timeout` process's pid): no
 *   search by name, nothing of anyone else's touched.
 * - Bounded twice over, in case the test process dies before its teardown:
 *   `timeout` kills the group after `maxSeconds`, and an exit hook of this
 *   process kills it too.
 * - A session of their own is an autogroup of their own (CONFIG_SCHED_AUTOGROUP,
 *   on in our VM): the scheduler gives the burners together the weight of one
 *   session, so the test files running beside this one keep at least half of
 *   the CPUs while the burners run (on a kernel without autogroup they would
 *   compete task by task).
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { until } from './until.js';

/** Groups started and not yet stopped: killed when this process exits, whatever the test did. */
const groups = new Set<number>();
function killAll(): void {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  groups.clear();
}
process.once('exit', killAll);
/** A signal that ends this process (ava ends a worker with SIGTERM) skips 'exit' hooks: kill the burners, then end as the signal would (unless someone else handles it). */
function onSignal(signal: NodeJS.Signals): void {
  killAll();
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(signal, onSignal);

/** Pids of the live (not zombie) processes of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      // fields after the command: state ppid pgrp ...
      const rest = readFileSync(`/proc/${d}/stat`, 'utf8').split(') ').pop()?.split(' ') ?? [];
      if (Number(rest[2]) === pgid && rest[0] !== 'Z') out.push(Number(d));
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

export class Burners {
  #stopped = false;

  private constructor(
    /** the process group (and session) id: the pid of `timeout` */
    readonly pgid: number,
    readonly count: number,
  ) {}

  /** Starts `count` busy loops; `maxSeconds` bounds them if nobody stops them. */
  static start(count: number, maxSeconds = 90): Burners {
    const script = `i=0; while [ "$i" -lt ${count} ]; do (while :; do :; done) & i=$((i+1)); done; wait`;
    const child = spawn('timeout', ['-s', 'KILL', String(maxSeconds), 'sh', '-c', script], { stdio: 'ignore', detached: true });
    if (child.pid === undefined) throw new Error('the burners did not start (timeout or sh missing?)');
    child.unref();
    groups.add(child.pid);
    return new Burners(child.pid, count);
  }

  /** Processes of the group alive now (timeout, sh and the loops). */
  alive(): number[] {
    return groupMembers(this.pgid);
  }

  /** Resolves once every loop runs (true), or false after `ms`. */
  ready(ms: number): Promise<boolean> {
    return until(() => this.alive().length >= this.count + 2, ms);
  }

  /** Kills the whole group and waits until none of it is left; throws if some process survives. */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      try {
        process.kill(-this.pgid, 'SIGKILL');
      } catch {
        // the group is gone already (timeout ran out)
      }
    }
    if (!(await until(() => this.alive().length === 0, 10_000))) {
      throw new Error(`burner processes ${this.alive().join(' ')} of group ${this.pgid} survived SIGKILL`);
    }
    groups.delete(this.pgid);
  }
}
