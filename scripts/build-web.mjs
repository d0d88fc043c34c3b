// The viewer's page: typechecks src/viewer/web/ (its own tsconfig, DOM lib),
// bundles main.ts and the styles (uPlot's CSS included) with esbuild, minified,
// into dist/viewer/web/ with index.html, and prints the sizes (gzip: the issue's
// budget is 150 KB). `node scripts/build-web.mjs` builds; `--if-stale` only
// when a source is newer than the bundle; `--no-typecheck` skips tsc; `--out DIR`
// writes elsewhere (tests).
// esbuild is imported when needed: start.mjs and test.mjs import this module
// before `npm install` may have run.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = join(fileURLToPath(new URL('.', import.meta.url)), '..');
export const WEB_SRC = join(ROOT, 'src', 'viewer', 'web');
export const WEB_OUT = join(ROOT, 'dist', 'viewer', 'web');
/** the bundle's files, as index.html names them */
const OUTPUTS = ['index.html', 'main.js', 'main.css'];
const GZIP_BUDGET = 150 * 1024;

function say(line) {
  process.stderr.write(`[build-web] ${line}\n`);
}

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/** Whether dist/viewer/web/ lacks a file or is older than src/viewer/web/, api.ts or the lock file. */
export function webStale() {
  const outputs = OUTPUTS.map((f) => join(WEB_OUT, f));
  if (!outputs.every((f) => existsSync(f))) return true;
  const built = Math.min(...outputs.map((f) => statSync(f).mtimeMs));
  const inputs = [newest(WEB_SRC), statSync(join(ROOT, 'src', 'viewer', 'api.ts')).mtimeMs, statSync(join(ROOT, 'package-lock.json')).mtimeMs];
  return Math.max(...inputs) > built;
}

/** tsc over src/viewer/web/ alone (DOM lib); throws with the errors. */
export function typecheckWeb() {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(WEB_SRC, 'tsconfig.json')], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`type errors in src/viewer/web/:\n${r.stdout}${r.stderr}`);
}

/**
 * Bundles the page into `out` (dist/viewer/web/); returns the files with their
 * raw and gzip sizes. Options: typecheck (default true), quiet (no size lines).
 */
export async function buildWeb({ typecheck = true, quiet = false, out = WEB_OUT } = {}) {
  if (typecheck) typecheckWeb();
  const esbuild = await import('esbuild');
  mkdirSync(out, { recursive: true });
  // built beside `out`, then each file renamed in: a page being served never reads half a bundle
  const tmp = mkdtempSync(join(dirname(out), '.web-build-'));
  try {
    await bundle(esbuild, tmp);
    for (const f of OUTPUTS) renameSync(join(tmp, f), join(out, f));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    // esbuild keeps a service process for later builds; npm start would carry it for as long as up runs
    await esbuild.stop();
  }
  const sizes = OUTPUTS.map((f) => {
    const body = readFileSync(join(out, f));
    return { file: f, bytes: body.length, gzip: gzipSync(body, { level: 9 }).length };
  });
  const total = sizes.reduce((s, f) => s + f.gzip, 0);
  if (!quiet) {
    for (const s of sizes) say(`${s.file}: ${(s.bytes / 1024).toFixed(1)} KB, ${(s.gzip / 1024).toFixed(1)} KB gzip`);
    say(`total ${(total / 1024).toFixed(1)} KB gzip (budget ${GZIP_BUDGET / 1024} KB)`);
  }
  if (total > GZIP_BUDGET) say(`warning: the bundle is over its ${GZIP_BUDGET / 1024} KB gzip budget`);
  return { files: sizes, gzip: total };
}

async function bundle(esbuild, out) {
  await esbuild.build({
    entryPoints: [
      { in: join(WEB_SRC, 'main.ts'), out: 'main' },
      { in: join(WEB_SRC, 'style.css'), out: 'main' },
    ],
    outdir: out,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    sourcemap: false,
    legalComments: 'eof',
    logLevel: 'warning',
    absWorkingDir: ROOT,
  });
  copyFileSync(join(WEB_SRC, 'index.html'), join(out, 'index.html'));
}

/** Builds when the bundle is missing or older than its sources (start.mjs, test.mjs). */
export async function ensureWeb() {
  if (!webStale()) return undefined;
  say('bundling the viewer page (src/viewer/web/ -> dist/viewer/web/)');
  return buildWeb({ typecheck: false });
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  try {
    const at = args.indexOf('--out');
    const out = at >= 0 ? args[at + 1] : undefined;
    if (at >= 0 && (out === undefined || out.startsWith('--'))) throw new Error('--out needs a directory');
    if (out === undefined && args.includes('--if-stale') && !webStale()) process.exit(0);
    await buildWeb({ typecheck: !args.includes('--no-typecheck'), ...(out === undefined ? {} : { out }) });
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
