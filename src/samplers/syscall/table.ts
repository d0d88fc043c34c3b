import type { BpfObject } from '../../native/index.js';
import { SamplerUnsupportedError } from '../types.js';
import { classTable, MAX_SYSCALL } from './classes.js';

/**
 * Fills the programs' `classes` map: entry n = class of syscall number n.
 * The numbers are x86_64's: elsewhere the classes would be wrong, so the
 * syscall samplers are unsupported there (32-bit compat syscalls on x86_64
 * are classified by their 64-bit numbers: a known inexactness).
 */
export function fillClasses(object: BpfObject): void {
  if (process.arch !== 'x64') {
    throw new SamplerUnsupportedError(`syscall classes are known for x86_64 only, this is ${process.arch}`);
  }
  const table = classTable();
  const key = Buffer.alloc(4);
  const value = Buffer.alloc(4);
  for (let nr = 0; nr < MAX_SYSCALL; nr++) {
    const cls = table[nr] as number;
    if (cls === 0) continue;
    key.writeUInt32LE(nr);
    value.writeUInt32LE(cls);
    object.update('classes', key, value);
  }
}
