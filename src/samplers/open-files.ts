/**
 * Pseudo-files kept open between refreshes, so that reading one is a single
 * pread(2) instead of open + read + close. On cgroupfs, where a refresh
 * reads ~15 files per cgroup, open and close were 40 % of the sampler's
 * time at 100-1000 cgroups (test/bench/README.md, "agent cost, second pass").
 *
 * Only for files whose fd fails once the file is gone (kernfs: cgroupfs,
 * sysfs; procfs): a removed cgroup's fd reads ENODEV, the entry is dropped
 * and the path opened again, so a cgroup made anew under the same name is
 * read from its own files. A regular file replaced by another would keep
 * being read from the old one: the cgroup sampler keeps files open only on
 * cgroupfs.
 *
 * At most `max` files stay open. Each is a file descriptor of the process
 * and, once read, keeps its seq_file buffer in the kernel: 1000 cgroupfs
 * files read once added 3.7 MB of unreclaimable slab here (+0.6 MB for the
 * open files alone), freed at close. Past `max`, a file is opened and closed
 * for each read. `sweep()` after a refresh closes those that refresh did
 * not read (cgroups that went away).
 *
 * Nor is a file kept whose descriptor is `keepBelow` or more: the kernel
 * hands out the lowest free number, so such a number means the table is
 * that full already (BPF maps, programs and links take ~150 here), and the
 * rest is left to them and to sockets.
 */
import { closeSync, openSync } from 'node:fs';
import { readFd, readPseudoFile } from './pseudo-file.js';

interface Entry {
  readonly fd: number;
  /** the sweep generation of its last read */
  seen: number;
}

export class OpenFiles {
  private readonly files = new Map<string, Entry>();
  private generation = 0;

  constructor(
    readonly max: number,
    /** a descriptor numbered this or higher is closed after the read, not kept */
    readonly keepBelow = Number.POSITIVE_INFINITY,
    /** every file is a single-record kernfs file: one read when it fits (readFd) */
    readonly singleRecord = false,
  ) {}

  /** How many files are open now. */
  get size(): number {
    return this.files.size;
  }

  /** The file as text; throws as open(2) or read(2) do. */
  read(path: string): string {
    const kept = this.files.get(path);
    if (kept !== undefined) {
      try {
        const text = readFd(kept.fd, this.singleRecord);
        kept.seen = this.generation;
        return text;
      } catch {
        // gone (ENODEV on kernfs) or replaced: open the path again
        this.files.delete(path);
        closeSync(kept.fd);
      }
    }
    const fd = openSync(path, 'r');
    let text: string;
    try {
      text = readFd(fd, this.singleRecord);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    if (this.files.size < this.max && fd < this.keepBelow) this.files.set(path, { fd, seen: this.generation });
    else closeSync(fd);
    return text;
  }

  /** Closes the kept files directly in one of `dirs` (not those of their subdirectories). */
  forgetDirs(dirs: ReadonlySet<string>): void {
    for (const [path, e] of this.files) {
      if (dirs.has(path.slice(0, path.lastIndexOf('/')))) {
        this.files.delete(path);
        closeSync(e.fd);
      }
    }
  }

  /** Closes the files not read since the last sweep. */
  sweep(): void {
    for (const [path, e] of this.files) {
      if (e.seen !== this.generation) {
        this.files.delete(path);
        closeSync(e.fd);
      }
    }
    this.generation++;
  }

  /** Closes every file. */
  close(): void {
    for (const e of this.files.values()) closeSync(e.fd);
    this.files.clear();
  }
}

/** The soft "Max open files" of a /proc/<pid>/limits text; undefined when absent or unlimited. */
export function softOpenFilesLimit(limits: string): number | undefined {
  const line = limits.split('\n').find((l) => l.startsWith('Max open files'));
  const soft = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
  if (soft === undefined || !/^\d+$/.test(soft)) return undefined;
  return Number(soft);
}

/** This process's soft limit on open files, from /proc/self/limits (the real one: the agent's own). */
export function ownSoftOpenFilesLimit(): number | undefined {
  try {
    return softOpenFilesLimit(readPseudoFile('/proc/self/limits'));
  } catch {
    return undefined;
  }
}

/** The `keepBelow` of an OpenFiles: files are kept only while a quarter of the descriptor table is free. */
export function keepBelowFd(softLimit: number | undefined): number {
  return softLimit === undefined ? Number.POSITIVE_INFINITY : softLimit - Math.floor(softLimit / 4);
}

/**
 * How many files an OpenFiles may keep: the configured number, but never more
 * than a quarter of the process's soft limit on descriptors (sockets, BPF
 * maps and links need the rest).
 */
export function openFilesBudget(configured: number, softLimit: number | undefined): number {
  return softLimit === undefined ? configured : Math.min(configured, Math.floor(softLimit / 4));
}
