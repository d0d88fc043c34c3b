// Builds the kernel side of the agent: vmlinux.h from this kernel's BTF, the
// CO-RE BPF objects (bpf/**/*.bpf.c -> build/bpf/**/*.bpf.o) and the native
// addons (native/ -> native/build/Release/rezolus_native.node, and
// rezolus_malloc.node: glibc malloc tuning, no library). Installs the
// Debian toolchain when missing and running as root. Incremental: a step runs
// only when its output is older than its inputs. Never throws: what cannot be
// built is said in one line, and the BPF samplers then report why they are
// unsupported while everything else runs.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ROOT, ensureDebian } from './setup.mjs';

const BTF = '/sys/kernel/btf/vmlinux';
/** bpf_tracing.h's name for this architecture (the PT_REGS layout of BPF_KPROBE-style macros). */
const TARGET_ARCH = { x64: 'x86', arm64: 'arm64', s390x: 's390', ppc64: 'powerpc', riscv64: 'riscv', loong64: 'loongarch' }[process.arch] ?? process.arch;
const OUT = join(ROOT, 'build', 'bpf');
const TOOLCHAIN = [
  ['/usr/bin/clang', 'clang'],
  ['/usr/bin/llvm-strip', 'llvm'],
  ['/usr/include/bpf/libbpf.h', 'libbpf-dev'],
  ['/usr/include/libelf.h', 'libelf-dev'],
  ['/usr/include/zlib.h', 'zlib1g-dev'],
  ['/usr/sbin/bpftool', 'bpftool'],
];

function say(line) {
  process.stderr.write(`[build-native] ${line}\n`);
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return 0;
  }
}

function walk(dir, suffix, out = []) {
  if (!existsSync(dir)) return out;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p, suffix, out);
    else if (e.name.endsWith(suffix)) out.push(p);
  }
  return out;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  return { ok: r.status === 0 && !r.error, out: r.stdout ?? '', err: (r.stderr ?? '') + (r.error ? String(r.error) : '') };
}

/** vmlinux.h from the running kernel's BTF; false when the kernel has none. */
function vmlinuxHeader() {
  const header = join(OUT, 'vmlinux.h');
  if (existsSync(header) && mtime(header) >= mtime(BTF)) return true;
  if (!existsSync(BTF)) {
    say(`${BTF} is missing (kernel built without CONFIG_DEBUG_INFO_BTF): BPF samplers will be unsupported`);
    return false;
  }
  mkdirSync(OUT, { recursive: true });
  const r = run('bpftool', ['btf', 'dump', 'file', BTF, 'format', 'c']);
  if (!r.ok) {
    say(`bpftool btf dump failed: ${r.err.trim()}`);
    return false;
  }
  writeFileSync(`${header}.tmp`, r.out);
  renameSync(`${header}.tmp`, header);
  return true;
}

/**
 * Compiles every bpf/**\/*.bpf.c that changed; returns the number that
 * failed. A failed object is removed (an old one would run code that no
 * longer matches its source) and its error is kept beside it in
 * `<object>.error`, which the agent quotes as the sampler's reason.
 */
function bpfObjects() {
  const sources = walk(join(ROOT, 'bpf'), '.bpf.c');
  const headers = [join(OUT, 'vmlinux.h'), ...walk(join(ROOT, 'bpf', 'include'), '.h')];
  const newestHeader = Math.max(...headers.map(mtime));
  let failed = 0;
  let built = 0;
  for (const src of sources) {
    const rel = relative(join(ROOT, 'bpf'), src).replace(/\.c$/, '.o');
    const obj = join(OUT, rel);
    const error = `${obj}.error`;
    const inputs = Math.max(mtime(src), newestHeader);
    if (mtime(obj) >= inputs) continue;
    if (!existsSync(obj) && mtime(error) >= inputs) {
      failed++; // failed before and unchanged since: say it again, do not retry
      say(`${relative(ROOT, src)} did not build (unchanged since): ${relative(ROOT, error)}`);
      continue;
    }
    mkdirSync(dirname(obj), { recursive: true });
    const tmp = `${obj}.full`;
    const cc = run('clang', [
      '-g', '-O2', '-target', 'bpf', `-D__TARGET_ARCH_${TARGET_ARCH}`, '-Wall', '-Werror',
      '-I', OUT, '-I', join(ROOT, 'bpf', 'include'), '-c', src, '-o', tmp,
    ]);
    // `bpftool gen object` drops the DWARF (600 KB -> 30 KB) and keeps the BTF CO-RE needs.
    const strip = cc.ok ? run('bpftool', ['gen', 'object', obj, tmp]) : cc;
    rmSync(tmp, { force: true });
    if (strip.ok) {
      built++;
      rmSync(error, { force: true });
    } else {
      failed++;
      rmSync(obj, { force: true });
      writeFileSync(error, strip.err.trim() + '\n');
      say(`cannot build ${relative(ROOT, src)}:\n${strip.err.trim()}`);
    }
  }
  if (built > 0) say(`built ${built} BPF object(s) in ${relative(ROOT, OUT)}`);
  return failed;
}

/**
 * The addon, with the node-gyp npm ships (Node's own headers: nothing is
 * downloaded). Rebuilt when a source changed or Node's ABI is not the one it
 * was built for (`build/Release/.abi`).
 */
function addon() {
  const target = join(ROOT, 'native', 'build', 'Release', 'rezolus_native.node');
  const targets = [target, join(ROOT, 'native', 'build', 'Release', 'rezolus_malloc.node')];
  const stamp = join(ROOT, 'native', 'build', 'Release', '.abi');
  const abi = `${process.versions.modules} ${process.arch}`;
  const inputs = [join(ROOT, 'native', 'binding.gyp'), ...walk(join(ROOT, 'native', 'src'), '')];
  const sameAbi = existsSync(stamp) && readFileSync(stamp, 'utf8') === abi;
  if (sameAbi && Math.min(...targets.map(mtime)) >= Math.max(...inputs.map(mtime))) return true;
  const gyp = process.env.npm_config_node_gyp ?? join(dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js');
  if (!existsSync(gyp)) {
    say(`node-gyp not found at ${gyp}: the native addon is not built, BPF and perf samplers will be unsupported`);
    return false;
  }
  // Node's headers beside its binary: /usr/include/node for Debian's /usr/bin/node,
  // /usr/local/include/node in the official Docker images (docker/Dockerfile)
  const nodeDir = dirname(dirname(process.execPath));
  if (!existsSync(join(nodeDir, 'include', 'node', 'node_api.h'))) {
    say(`Node's headers are not in ${join(nodeDir, 'include', 'node')}: the native addon is not built, BPF and perf samplers will be unsupported`);
    return false;
  }
  say('building the native addon (node-gyp)');
  const r = run(process.execPath, [gyp, 'rebuild', `--nodedir=${nodeDir}`, '--loglevel=warn'], { cwd: join(ROOT, 'native') });
  if (!r.ok) {
    for (const t of targets) rmSync(t, { force: true });
    say(`native addon build failed:\n${r.err.trim()}`);
    return false;
  }
  writeFileSync(stamp, abi);
  return true;
}

/** Builds what is missing or stale; returns false when something could not be built (said on stderr). */
export function buildNative() {
  if (process.platform !== 'linux') {
    say('not Linux: kernel samplers are not built');
    return false;
  }
  const missing = ensureDebian(TOOLCHAIN);
  if (missing.length > 0) {
    say(`toolchain incomplete (${missing.join(', ')}): kernel samplers are not built`);
    return false;
  }
  let ok = addon();
  if (vmlinuxHeader()) {
    const failed = bpfObjects();
    if (failed > 0) {
      say(`${failed} BPF object(s) failed to build: those samplers will be reported unsupported, with the error`);
      ok = false;
    }
  } else {
    ok = false;
  }
  return ok;
}

// `npm run build:native`: exit 1 when anything failed (npm start and npm test go on without it).
if (import.meta.url === `file://${process.argv[1]}`) process.exit(buildNative() ? 0 : 1);
