/**
 * Lock files holding the owner's pid and its start time, so that two
 * recorders never append to one spool and two `rezolus up` never share one
 * data directory. A lock whose process is gone (killed with SIGKILL) is
 * taken over; so is one whose pid now belongs to another process (the start
 * time differs).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { RezolusError } from '../errors.js';
import { writeError } from './io-error.js';

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Field 22 of /proc/<pid>/stat: when the process started, in clock ticks since boot; undefined when unreadable. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name (field 2) is in parentheses and may hold spaces
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

function readLock(lock: string): string | undefined {
  try {
    return readFileSync(lock, 'utf8');
  } catch {
    return undefined;
  }
}

/** The owner a lock file names: its pid, when that process still runs (and is the one that wrote it). */
export function lockOwner(lock: string): number | undefined {
  const text = readLock(lock);
  return text === undefined ? undefined : liveOwner(text);
}

function liveOwner(text: string): number | undefined {
  const [pidText, start] = text.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || !processAlive(pid)) return undefined;
  // a lock of an older version has no start time: the pid alone decides
  if (start !== undefined && processStartTime(pid) !== undefined && processStartTime(pid) !== start) return undefined;
  return pid;
}

/**
 * Takes the lock file `lock`; returns its release. `inUse(pid)` words the
 * refusal when a live process holds it.
 */
export function takeLock(lock: string, inUse: (pid: number) => string): () => void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(lock, `${process.pid} ${processStartTime(process.pid) ?? ''}\n`, { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError(lock, error);
    }
    const text = readLock(lock);
    if (text === undefined) continue; // released meanwhile
    const owner = liveOwner(text);
    if (owner !== undefined) throw new RezolusError('LOCKED', inUse(owner));
    // stale; unless another process took it over since it was read
    if (readLock(lock) === text) rmSync(lock, { force: true });
  }
  throw new RezolusError('LOCKED', `cannot take the lock ${lock}`);
}

/** Takes the lock of `path` (`<path>.lock`); returns its release. */
export function lockFile(path: string): () => void {
  const lock = `${path}.lock`;
  return takeLock(lock, (pid) => `${path} is in use by another recorder (pid ${pid}, ${lock})`);
}
