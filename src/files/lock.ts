/**
 * A lock file (`<path>.lock`, holding the owner's pid) so that two
 * recorders never append to one spool. A lock whose process is gone (a
 * recorder killed with SIGKILL) is taken over.
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

/** Takes the lock of `path`; returns its release. */
export function lockFile(path: string): () => void {
  const lock = `${path}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, `${process.pid}\n`, { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw writeError(lock, error);
    }
    const pid = Number(readFileSync(lock, 'utf8').trim());
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && processAlive(pid)) {
      throw new RezolusError('LOCKED', `${path} is in use by another recorder (pid ${pid}, ${lock})`);
    }
    rmSync(lock, { force: true });
  }
  throw new RezolusError('LOCKED', `cannot take the lock ${lock}`);
}
