import type { BpfObject } from '../../native/index.js';
import { classTable, MAX_SYSCALL } from './classes.js';

/** Fills the programs' `classes` map: entry n = class of syscall number n. */
export function fillClasses(object: BpfObject): void {
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
