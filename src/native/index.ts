/**
 * The only loader of the native addons (native/, built by
 * scripts/build-native.mjs): libbpf and perf_event_open, mechanism only; and
 * the small malloc one.
 * Errors it throws carry the errno name as `code` and say what failed
 * ("attach tp_btf/sched_switch: EPERM").
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RezolusError } from '../errors.js';

/** The repository root: two levels above this file in src/native and in dist/native alike. */
export const PROJECT_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ADDON_PATH = join(PROJECT_ROOT, 'native', 'build', 'Release', 'rezolus_native.node');
/** glibc malloc tuning, no library of its own (native/src/malloc.c), built with the addon */
export const MALLOC_ADDON_PATH = join(PROJECT_ROOT, 'native', 'build', 'Release', 'rezolus_malloc.node');

export interface BpfProgramInfo {
  readonly name: string;
  /** the ELF section, which says how libbpf attaches it (`tp_btf/sched_switch`) */
  readonly section: string;
  readonly autoload: boolean;
  readonly attached: boolean;
}

export interface BpfMapInfo {
  readonly name: string;
  /** enum bpf_map_type (1 hash, 2 array) */
  readonly type: number;
  readonly keySize: number;
  readonly valueSize: number;
  readonly maxEntries: number;
  readonly mmapable: boolean;
}

export interface BpfProgramStats {
  readonly name: string;
  readonly id: number;
  readonly attached: boolean;
  /** runs and run time counted by the kernel while BPF stats are enabled */
  readonly runCount: bigint;
  readonly runTimeNs: bigint;
}

/** A BPF object file: open, choose programs, size maps, load, attach, read. */
export interface BpfObject {
  programs(): BpfProgramInfo[];
  setAutoload(program: string, on: boolean): void;
  maps(): BpfMapInfo[];
  setMaxEntries(map: string, entries: number): void;
  load(): void;
  attach(program: string): void;
  /** destroys the program's link (it stays loaded and can be attached again); nothing when not attached */
  detach(program: string): void;
  /** a read-only view of an mmapable array map; it stays valid after close() */
  mmap(map: string): ArrayBuffer;
  lookup(map: string, key: Buffer): Buffer | null;
  update(map: string, key: Buffer, value: Buffer): void;
  programStats(): BpfProgramStats[];
  /**
   * Run count and run time of each attached program, in program order (the
   * order of programs() filtered to attached), into out[2i] and out[2i+1];
   * returns how many programs were written. No object per program: for
   * every refresh.
   */
  readRunStats(out: BigUint64Array): number;
  /** BPF_PROG_TEST_RUN; returns the program's return value */
  testRun(program: string, ctx?: Buffer): number;
  close(): void;
}

export interface NativeAddon {
  readonly BpfObject: new (path: string) => BpfObject;
  /** whether this kernel's BTF (or a module's) has the named type */
  btfHasType(name: string, kind: 'typedef' | 'struct' | 'enum' | 'func', module?: string): boolean;
  /** how many arguments a tracepoint passes to tp_btf programs (vmlinux, then the module), or -1 when it has none here */
  btfTracepointArgs(event: string, module?: string): number;
  /** the members of a vmlinux enum, or null */
  btfEnum(name: string): Record<string, number> | null;
  /** frees the BTF the two lookups above load and keep (~6 MB for vmlinux); the next lookup loads it again (~10 ms) */
  releaseBtf(): void;
  /** BPF_ENABLE_STATS: run time is counted while the returned fd is open */
  enableStats(): number;
  /**
   * perf_event_open(type, config) on one CPU, for every task unless `pid`;
   * with `groupFd` the event joins that leader's group. Returns the fd.
   */
  perfOpen(type: number, config: number | bigint, cpu: number, pid?: number, groupFd?: number): number;
  /**
   * One read per group leader: out[i*width ...] = members, time enabled,
   * time running, then each member's value in the order it joined.
   * Returns how many reads failed (their slots are zeros).
   */
  perfRead(leaders: Int32Array, out: BigUint64Array, width: number): number;
  closeFd(fd: number): void;
  /**
   * The non-zero words of `src` (an mmapped map, read with one 64-bit load
   * each): their positions into index[0..n) and values into value[0..n), in
   * order; a value past 2^53 as the nearest double. Returns n; stops when
   * index or value is full.
   */
  scanU64(src: BigUint64Array, index: Uint32Array, value: Float64Array): number;
  /**
   * Writes src[0..n) at dst[at..) as msgpack numbers, the frame encoder's
   * bytes (NumberPacker in src/frame/encode.ts); returns the position after.
   * Throws when dst has fewer than 9 bytes a number left.
   */
  packNumbers(src: Float64Array, n: number, plain: boolean, dst: Uint8Array, at: number): number;
  readonly numPossibleCpus: number;
  readonly libbpfVersion: string;
}

let cached: NativeAddon | undefined;

/** The addon file at `path`, or a NATIVE_UNAVAILABLE error that says how to build it, or why it does not load. */
function requireAddon<T>(path: string): T {
  if (!existsSync(path)) {
    throw new RezolusError('NATIVE_UNAVAILABLE', `native addon ${path} is not built (npm run build:native)`);
  }
  try {
    return createRequire(import.meta.url)(path) as T;
  } catch (error) {
    throw new RezolusError('NATIVE_UNAVAILABLE', `native addon ${path} does not load: ${String(error)}`, { cause: error });
  }
}

/** The addon, or a NATIVE_UNAVAILABLE error that says how to build it. */
export function loadNative(): NativeAddon {
  cached ??= requireAddon<NativeAddon>(ADDON_PATH);
  return cached;
}

export interface MallocAddon {
  /**
   * glibc's mallopt(M_ARENA_MAX, n): once n malloc arenas exist, a thread
   * without one shares them. false where it was not taken (n < 1, or a C
   * library that is not glibc).
   */
  mallocArenaMax(n: number): boolean;
  /**
   * glibc's malloc_trim(0): the free pages of every arena go back to the
   * kernel and leave RSS until malloc reuses them. true when some were given
   * back; false otherwise, and where the C library is not glibc.
   */
  mallocTrim(): boolean;
  /**
   * V8's MemoryPressureNotification, moderate then none at once: an
   * incremental mark that ends in a full GC which leaves the young
   * generation at its least size and gives the old space's free pages back,
   * as V8's own memory reducer does when a process goes quiet. true once
   * asked (the GC runs over the next few ms of JS).
   */
  reduceHeap(): boolean;
  /**
   * Replaces this process's image with the program at `path` run with
   * `argv` (execv: same pid, same environment; argv[0] is its name).
   * Returns only when that fails: the reason.
   */
  reexec(path: string, argv: readonly string[]): string;
  /**
   * Overwrites with 'x' the rest of each command-line argument of this
   * process that starts with one of `prefixes`, where /proc/<pid>/cmdline
   * reads it; how many, or -1 when that memory is not known.
   */
  hideArgs(prefixes: readonly string[]): number;
}

/** The malloc addon, or a NATIVE_UNAVAILABLE error (not built, or does not load). */
export function loadMallocAddon(): MallocAddon {
  return requireAddon<MallocAddon>(MALLOC_ADDON_PATH);
}

/** Where the build puts the object of `bpf/<relative>.bpf.c`. */
export function bpfObjectPath(relative: string): string {
  return join(PROJECT_ROOT, 'build', 'bpf', `${relative}.bpf.o`);
}
