/**
 * cgroup v1 lets a cgroup be renamed (v2 refuses). After `A` is renamed to
 * `B` and a new `A` made, the files kept open under the name A (open-files.ts)
 * are B's: their fds still read fine. So, once a refresh, each v1 cgroup
 * directory whose files are read is stat'ed, and when its inode is not the
 * one its kept files were opened under, they are dropped and opened again.
 * One stat per cgroup and v1 hierarchy a refresh (measured in
 * test/bench/README.md, "agent cost, second pass").
 */
import { statSync } from 'node:fs';
import type { OpenFiles } from '../open-files.js';

export class RenameGuard {
  /** directory -> its inode when last checked */
  private readonly inodes = new Map<string, bigint>();
  private checked = new Set<string>();

  constructor(
    private readonly files: OpenFiles,
    /** the mount points of v1 hierarchies; the directories below them are checked */
    private readonly v1Mounts: readonly string[],
  ) {}

  /** Before a read of `path`: drops the kept files of its directory if that is another directory than before. */
  check(path: string): void {
    const dir = path.slice(0, path.lastIndexOf('/'));
    if (this.checked.has(dir)) return;
    this.checked.add(dir);
    if (!this.v1Mounts.some((m) => dir.startsWith(`${m}/`))) return;
    let ino: bigint;
    try {
      ino = statSync(dir, { bigint: true }).ino;
    } catch {
      this.inodes.delete(dir);
      return; // gone: the reads fail on their own
    }
    const known = this.inodes.get(dir);
    if (known !== undefined && known !== ino) this.files.forgetDir(dir);
    this.inodes.set(dir, ino);
  }

  /** After a refresh: forgets the directories it did not read. */
  sweep(): void {
    for (const dir of this.inodes.keys()) if (!this.checked.has(dir)) this.inodes.delete(dir);
    this.checked = new Set();
  }
}
