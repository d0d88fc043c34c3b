import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SamplerUnsupportedError } from './types.js';

/**
 * Reads a procfs/sysfs file as text below a configurable root (`/proc`, `/sys`
 * or a fixture root). Synchronous on purpose: these pseudo-files are generated
 * in memory, and a sync read costs 10-30 µs where fs/promises costs 150-280 µs
 * (measured on this machine type), which matters at 10 refreshes a second.
 */
export async function readText(root: string, relative: string): Promise<string> {
  return readFileSync(join(root, relative), 'utf8');
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
