/**
 * The one BPF object of syscall_counts and syscall_latency
 * (bpf/syscall/shared.bpf.c), loaded once for whichever of the two is
 * enabled: a syscall then runs one sys_enter program however many of them
 * are on, and sys_exit only while latency is. Each sampler acquires its role
 * and reads its own maps; the object sets the `enabled` bits, attaches
 * sys_exit with latency and is closed when the last role is released.
 *
 * The object is sized for the samplers the agent has enabled (its sampler
 * states): with latency disabled the per-thread stamps take one entry, not
 * pid_max (16 bytes each: 64 MiB of kernel memory at a pid_max of 2^22), and
 * with counts disabled the per-cgroup counters take one. A role that an
 * object was not sized for (a sampler enabled after the fact, or a second
 * agent in the process) gets an object of its own.
 *
 * rezolus_bpf lists each object under the samplers that use it, joined with
 * '+' (`syscall_counts+syscall_latency` when both are on).
 */
import type { SamplerContext } from '../../types.js';
import { SamplerUnsupportedError } from '../../types.js';
import { openBpf, releaseBtf, type LoadedBpf } from '../../kernel/load.js';
import { registerLoaded, unregisterLoaded } from '../../kernel/loaded.js';
import { SYSCALL_CLASSES } from '../classes.js';
import { fillClasses } from '../table.js';
import { COUNTS, LATENCY, LAYOUT } from './maps.js';

export type SyscallRole = 'syscall_counts' | 'syscall_latency';

const ROLES: Readonly<Record<SyscallRole, { bit: number; programs: readonly string[]; maps: readonly string[] }>> = {
  syscall_counts: { bit: COUNTS, programs: ['sys_enter'], maps: ['cgroup_syscall', 'cgroup_serial', 'cgroup_inode'] },
  syscall_latency: { bit: LATENCY, programs: ['sys_enter', 'sys_exit'], maps: ['started', 'pending'] },
};
const ALL: readonly SyscallRole[] = ['syscall_counts', 'syscall_latency'];

export interface SyscallBpfHandle {
  readonly bpf: LoadedBpf;
  /** why this role runs with less than its programs; undefined when whole */
  readonly degraded: string | undefined;
  /** sets each class's sampling shift (sampling.ts; latency's own), written to the object when one changed */
  setSampleShifts(shifts: Uint8Array): void;
  release(): void;
}

interface Shared {
  readonly bpf: LoadedBpf;
  readonly roles: Set<SyscallRole>;
  /** the roles its maps are sized for */
  readonly sized: ReadonlySet<SyscallRole>;
  /** the .bss map that holds `enabled`, `epoch` and `sample_shift` */
  readonly bss: string;
  epoch: number;
  /** sample_shift[class]: 0 times every syscall of the class */
  readonly shifts: Uint8Array;
  registeredAs: string | undefined;
}

const instances: Shared[] = [];

/** `role` and the other role when the agent has it enabled (both when there is no agent to ask). */
function expected(role: SyscallRole, ctx: SamplerContext): Set<SyscallRole> {
  const states = ctx.agent?.samplerStates();
  return new Set(ALL.filter((r) => r === role || states === undefined || states.some((s) => s.name === r && s.state !== 'disabled')));
}

function open(role: SyscallRole, ctx: SamplerContext): Shared {
  const sized = expected(role, ctx);
  const shrink = ALL.filter((r) => !sized.has(r)).flatMap((r) => ROLES[r].maps);
  let bpf: LoadedBpf | undefined;
  try {
    bpf = openBpf(LAYOUT, {
      sampler: role, log: ctx.log, events: ctx.bpfEvents, afterLoad: fillClasses, attach: [], register: false,
      beforeLoad: (object) => {
        for (const map of shrink) object.setMaxEntries(map, 1);
      },
    });
    const bss = bpf.object.maps().find((m) => m.name.endsWith('.bss'))?.name;
    if (bss === undefined) throw new Error(`${LAYOUT.object} has no .bss map for its globals`);
    return { bpf, roles: new Set(), sized, bss, epoch: 0, shifts: new Uint8Array(SYSCALL_CLASSES.length), registeredAs: undefined };
  } catch (error) {
    bpf?.close();
    throw error;
  } finally {
    releaseBtf();
  }
}

/** Writes the globals (.bss: u32 enabled, u32 epoch, u8 sample_shift[classes]) and re-registers the object under its roles. */
function publish(s: Shared): void {
  let bits = 0;
  for (const r of s.roles) bits |= ROLES[r].bit;
  const value = Buffer.alloc(8 + s.shifts.length);
  value.writeUInt32LE(bits, 0);
  value.writeUInt32LE(s.epoch, 4);
  value.set(s.shifts, 8);
  s.bpf.object.update(s.bss, Buffer.alloc(4), value);
  const name = ALL.filter((r) => s.roles.has(r)).join('+');
  if (s.registeredAs !== name) {
    if (s.registeredAs !== undefined) unregisterLoaded(s.registeredAs, s.bpf.object);
    if (name !== '') registerLoaded(name, s.bpf.object);
    s.registeredAs = name === '' ? undefined : name;
  }
}

/** Attaches the programs the object's roles need and detaches the others (sys_exit only while latency is on); returns what failed to attach. */
function syncAttached(s: Shared): string[] {
  const degraded: string[] = [];
  const wanted = new Set([...s.roles].flatMap((r) => ROLES[r].programs));
  for (const name of LAYOUT.programs.map((p) => p.name)) {
    if (!wanted.has(name)) {
      s.bpf.detach(name);
      continue;
    }
    if (s.bpf.attached.includes(name)) continue;
    if (!s.bpf.loaded.includes(name)) continue;
    try {
      s.bpf.attach(name);
    } catch (error) {
      degraded.push(`${name}: ${(error as Error).message}`);
    }
  }
  return degraded;
}

/**
 * Turns `role` on in an object sized for it that does not have it yet,
 * loading one when there is none, and attaches what the role needs. Throws
 * SamplerUnsupportedError when none of the role's programs can run here.
 */
export function acquireSyscallBpf(role: SyscallRole, ctx: SamplerContext): SyscallBpfHandle {
  const found = instances.find((i) => !i.roles.has(role) && i.sized.has(role));
  const s = found ?? open(role, ctx);
  const programs = ROLES[role].programs;
  const missing = programs.filter((p) => !s.bpf.loaded.includes(p));
  const why = (p: string): string => s.bpf.degraded.find((d) => d.startsWith(`${p}: `)) ?? `${p}: not loaded`;
  if (missing.length === programs.length) {
    if (found === undefined) s.bpf.close();
    throw new SamplerUnsupportedError(`none of its tracepoints exist here: ${missing.map(why).join('; ')}`);
  }
  if (found === undefined) instances.push(s);
  s.roles.add(role);
  if (role === 'syscall_latency') {
    s.epoch = (s.epoch + 1) >>> 0 || 1;
    s.shifts.fill(0);
  }
  // bits first, then sys_exit: a sys_exit attached before stamps exist finds none
  publish(s);
  const failed = syncAttached(s).filter((d) => programs.some((p) => d.startsWith(`${p}: `)));
  const reasons = [...missing.map(why), ...failed];
  if (reasons.length > 0) ctx.log.warn({ degraded: reasons }, 'sampler runs without some of its programs');
  let released = false;
  return {
    bpf: s.bpf,
    degraded: reasons.length > 0 ? reasons.join('; ') : undefined,
    setSampleShifts(shifts: Uint8Array): void {
      if (released || s.shifts.every((v, k) => v === shifts[k])) return;
      s.shifts.set(shifts.subarray(0, s.shifts.length));
      publish(s);
    },
    release(): void {
      if (released) return;
      released = true;
      s.roles.delete(role);
      if (s.roles.size === 0) {
        if (s.registeredAs !== undefined) unregisterLoaded(s.registeredAs, s.bpf.object);
        s.bpf.close();
        instances.splice(instances.indexOf(s), 1);
        return;
      }
      // sys_exit off first, then the bits
      syncAttached(s);
      publish(s);
    },
  };
}
