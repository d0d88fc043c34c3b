import { keepBelowFd, OpenFiles, ownSoftOpenFilesLimit } from './open-files.js';
import { PathCache } from './path-cache.js';
import { fileSystemType, readPseudoFile } from './pseudo-file.js';
import { SamplerUnsupportedError } from './types.js';

export { readPseudoFile };

const PROC_SUPER_MAGIC = 0x9fa0;
const SYSFS_MAGIC = 0x62656572;
/** The procfs and sysfs files the samplers read each tick, kept open (never swept: a fixed set) */
const kept = new OpenFiles(64, keepBelowFd(ownSoftOpenFilesLimit()));
/** root -> whether it is a real procfs or sysfs (a fixture root is not: its files may be replaced) */
const pseudoRoots = new Map<string, boolean>();
const paths = new PathCache();

function isPseudoRoot(root: string): boolean {
  let pseudo = pseudoRoots.get(root);
  if (pseudo === undefined) {
    const type = fileSystemType(root);
    pseudo = type === PROC_SUPER_MAGIC || type === SYSFS_MAGIC;
    pseudoRoots.set(root, pseudo);
  }
  return pseudo;
}

/**
 * Reads a procfs/sysfs file as text below a configurable root (`/proc`, `/sys`
 * or a fixture root). Below a real procfs or sysfs the file stays open and
 * the next read is one pread(2) from offset 0, which the kernel answers with
 * fresh text (saves an open and a close per file and tick); an fd that fails
 * is closed and the path opened again.
 */
export async function readText(root: string, relative: string): Promise<string> {
  const path = paths.join(root, relative);
  return isPseudoRoot(root) ? kept.read(path) : readPseudoFile(path);
}

/**
 * Checks at init that a sampler's source can be read; throws
 * SamplerUnsupportedError naming the path otherwise, so the agent reports
 * the sampler as disabled with that reason.
 */
export async function requireSource(root: string, relative: string): Promise<void> {
  try {
    await readText(root, relative);
  } catch (error) {
    throw new SamplerUnsupportedError(`cannot read ${root}/${relative}`, { cause: error });
  }
}
