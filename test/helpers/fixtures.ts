import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FIXTURE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
export const ROOTFS = join(FIXTURE_ROOT, 'rootfs');
export const PROC = join(ROOTFS, 'proc');
export const SYS = join(ROOTFS, 'sys');

/** Reads a fixture file relative to test/fixtures. */
export function fixture(relative: string): string {
  return readFileSync(join(FIXTURE_ROOT, relative), 'utf8');
}

/** `[kernel]` for an agent on the fixture root: BPF and perf samplers read the live kernel, so they stay off. */
export const NO_KERNEL = { enabled: false, bpfStats: false } as const;
