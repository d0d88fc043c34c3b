/**
 * Opens, sizes, loads and attaches a BPF sampler's object, program by
 * program: a program whose tracepoint this kernel lacks is not loaded (nor a
 * variant written for other tracepoint arguments), one the verifier rejects
 * is left out, one that fails to attach is reported; each leaves the sampler
 * degraded, not dead. Conditions that rule out every BPF sampler (no root, no
 * BTF, no addon, no object file) throw SamplerUnsupportedError with one clear
 * reason.
 */
import { existsSync, readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { bpfObjectPath, loadNative, type BpfObject, type NativeAddon } from '../../native/index.js';
import { SamplerUnsupportedError } from '../types.js';
import type { BpfLayout } from './layout.js';
import { selectPrograms } from './select.js';
import { hostCpuIdLimit } from './cpu-ids.js';
import { CounterBankView, HistogramView, PackedView } from './views.js';
import { registerLoaded, unregisterLoaded } from './loaded.js';

const BTF_PATH = '/sys/kernel/btf/vmlinux';

export interface LoadedBpf {
  readonly object: BpfObject;
  /** why the sampler runs with less than all its programs; empty when whole */
  readonly degraded: readonly string[];
  /** the programs that are attached */
  readonly attached: readonly string[];
  /** the programs that are loaded (attached or not) */
  readonly loaded: readonly string[];
  /** attaches a loaded program (nothing when attached); throws when the kernel refuses */
  attach(program: string): void;
  /** detaches a program (it stays loaded); nothing when not attached */
  detach(program: string): void;
  /** CPU ids run below this (counter banks hold as many CPUs): one past the highest possible CPU */
  readonly cpus: number;
  readonly native: NativeAddon;
  histogram(map: string, k?: number): HistogramView;
  counters(map: string): CounterBankView;
  packed(map: string): PackedView;
  close(): void;
}

export interface OpenOptions {
  readonly sampler: string;
  readonly log: Logger;
  /** replaces the event of named programs (tests force a missing tracepoint with it) */
  readonly events?: Readonly<Record<string, string>>;
  /** called after sizing and before load, to set table sizes of its own */
  readonly beforeLoad?: (object: BpfObject) => void;
  /** called after load and before attach, to fill lookup tables the programs read */
  readonly afterLoad?: (object: BpfObject) => void;
  /**
   * The programs to attach now, of those that loaded (default: all of them).
   * With a list, none attaching is not an error: the caller attaches the
   * rest later with LoadedBpf.attach.
   */
  readonly attach?: readonly string[];
  /** registers the object for rezolus_bpf under `sampler` (default true) */
  readonly register?: boolean;
}

/** The kernel's pid_max: the size of per-pid arrays. */
function pidMax(): number {
  try {
    const n = Number.parseInt(readFileSync('/proc/sys/kernel/pid_max', 'utf8').trim(), 10);
    if (Number.isInteger(n) && n > 0) return n;
  } catch {
    // fall through
  }
  return 4_194_304;
}

/** Why an object file is missing: its build error (kept beside it by the build) or never built. */
function notBuilt(path: string): string {
  try {
    const error = readFileSync(`${path}.error`, 'utf8').split('\n').find((l) => /error:/.test(l)) ?? '';
    return `BPF object ${path} failed to build${error ? `: ${error.trim()}` : ''} (npm run build:native shows the whole error)`;
  } catch {
    return `BPF object ${path} is not built (npm run build:native)`;
  }
}

/** Throws SamplerUnsupportedError when BPF cannot work on this host at all. */
export function requireBpf(): NativeAddon {
  if (process.getuid?.() !== 0) throw new SamplerUnsupportedError('needs root to load BPF programs');
  if (!existsSync(BTF_PATH)) throw new SamplerUnsupportedError(`kernel has no BTF (${BTF_PATH} is missing)`);
  try {
    return loadNative();
  } catch (error) {
    throw new SamplerUnsupportedError((error as Error).message, { cause: error });
  }
}

/** Frees the kernel BTF that the tracepoint checks loaded, when the addon is there at all. */
export function releaseBtf(): void {
  try {
    loadNative().releaseBtf();
  } catch {
    // no addon: nothing was loaded
  }
}

export function openBpf(layout: BpfLayout, o: OpenOptions): LoadedBpf {
  const native = requireBpf();
  const path = bpfObjectPath(layout.object);
  if (!existsSync(path)) throw new SamplerUnsupportedError(notBuilt(path));
  const selection = selectPrograms(layout, native, o.events);
  if (selection.load.length === 0) throw new SamplerUnsupportedError(`none of its tracepoints exist here: ${selection.degraded.join('; ')}`);
  const { object, rejected } = loadObject(path, native, layout, o, selection.load);
  try {
    return attachAll(object, native, layout, o, selection.load.filter((n) => !rejected.has(n)), [
      ...selection.degraded,
      ...[...rejected].map(([name, why]) => `${name}: ${why}`),
    ]);
  } catch (error) {
    object.close();
    throw error;
  }
}

/**
 * A loaded object with the programs `load` (sized, tables filled). When the
 * verifier rejects the object, each program is tried alone in a fresh object
 * (libbpf cannot load an object twice) and the object is loaded again
 * without the rejected ones; only when none or all are rejected does the
 * load fail. Costs one load per program, on this failure path only.
 */
function loadObject(
  path: string, native: NativeAddon, layout: BpfLayout, o: OpenOptions, load: readonly string[],
): { object: BpfObject; rejected: Map<string, string> } {
  const cpus = hostCpuIdLimit(native.numPossibleCpus);
  const pids = pidMax();
  const open = (programs: readonly string[]): BpfObject => {
    const object = new native.BpfObject(path);
    try {
      for (const [name, m] of Object.entries(layout.maps)) {
        if (m.kind === 'counters') object.setMaxEntries(name, cpus * m.width);
        else if (m.kind === 'per-pid') object.setMaxEntries(name, pids);
        else if (m.kind === 'per-cpu') object.setMaxEntries(name, cpus);
      }
      for (const p of layout.programs) object.setAutoload(p.name, programs.includes(p.name));
      o.beforeLoad?.(object);
      object.load();
      o.afterLoad?.(object);
      return object;
    } catch (error) {
      object.close();
      throw error;
    }
  };
  try {
    return { object: open(load), rejected: new Map() };
  } catch (error) {
    if (load.length < 2) throw error;
    const rejected = new Map<string, string>();
    for (const name of load) {
      try {
        open([name]).close();
      } catch (alone) {
        rejected.set(name, (alone as Error).message);
      }
    }
    if (rejected.size === 0 || rejected.size === load.length) throw error;
    return { object: open(load.filter((n) => !rejected.has(n))), rejected };
  }
}

function attachAll(
  object: BpfObject, native: NativeAddon, layout: BpfLayout, o: OpenOptions, loaded: readonly string[], degraded: string[],
): LoadedBpf {
  const cpus = hostCpuIdLimit(native.numPossibleCpus);
  const attached: string[] = [];
  for (const name of o.attach === undefined ? loaded : loaded.filter((n) => o.attach?.includes(n))) {
    try {
      object.attach(name);
      attached.push(name);
    } catch (error) {
      degraded.push(`${name}: ${(error as Error).message}`);
    }
  }
  if (attached.length === 0 && o.attach === undefined) throw new Error(`no program attached: ${degraded.join('; ')}`);
  if (degraded.length > 0) o.log.warn({ degraded }, 'sampler runs without some of its programs');

  const buffers = new Map<string, ArrayBuffer>();
  const buffer = (map: string): ArrayBuffer => {
    let b = buffers.get(map);
    if (b === undefined) {
      b = object.mmap(map);
      buffers.set(map, b);
    }
    return b;
  };
  const register = o.register !== false;
  if (register) registerLoaded(o.sampler, object);
  return {
    object,
    degraded,
    attached,
    loaded,
    attach: (name) => {
      if (!loaded.includes(name)) throw new Error(`${name} is not loaded in ${layout.object}`);
      object.attach(name);
      if (!attached.includes(name)) attached.push(name);
    },
    detach: (name) => {
      object.detach(name);
      const i = attached.indexOf(name);
      if (i >= 0) attached.splice(i, 1);
    },
    cpus,
    native,
    histogram: (map, k = 0) => new HistogramView(buffer(map), k),
    counters: (map) => {
      const m = layout.maps[map];
      if (m?.kind !== 'counters') throw new Error(`${map} is not a counter bank in ${layout.object}`);
      return new CounterBankView(buffer(map), m.width, cpus);
    },
    packed: (map) => {
      const m = layout.maps[map];
      if (m?.kind !== 'packed') throw new Error(`${map} is not a packed array in ${layout.object}`);
      return new PackedView(buffer(map), m.entries);
    },
    close: () => {
      if (register) unregisterLoaded(o.sampler, object);
      object.close();
    },
  };
}
