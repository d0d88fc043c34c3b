// The compiled CLI: src/ to dist/ with tsc (tsconfig.build.json), which
// bin/rezolus.js, npm start and the tests run. `node scripts/build-cli.mjs`
// builds; `--if-stale` only when a file under src/ (but the page's
// src/viewer/web/, which build-web.mjs bundles) or a tsconfig changed since the
// last build began. A stamp in dist/ holds that time: tsc leaves an output it
// would not change untouched, so the outputs' own times say nothing.
// Callers at once (ava runs test files in parallel processes) build once: the
// first takes a lock directory in dist/, the others wait for it and look again.
// Plain JavaScript with no dependencies beyond typescript.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const CLI_ENTRY = join(ROOT, 'dist', 'cli', 'rezolus.js');
const STAMP = join(ROOT, 'dist', '.cli-build-stamp');
const LOCK = join(ROOT, 'dist', '.cli-build-lock');
const SKIP = join(ROOT, 'src', 'viewer', 'web');
const LOCK_WAIT_MS = 5 * 60_000;

function say(line) {
  process.stderr.write(`[build-cli] ${line}\n`);
}

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = p === SKIP ? t : Math.max(t, newest(p));
    else if (e.name.endsWith('.ts')) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/** Why dist/ is stale (a sentence), or undefined when it is up to date. */
export function cliStale() {
  if (!existsSync(CLI_ENTRY)) return `${CLI_ENTRY} is missing`;
  if (!existsSync(STAMP)) return 'no build of this checkout recorded yet';
  const built = statSync(STAMP).mtimeMs;
  const inputs = [newest(join(ROOT, 'src')), ...['tsconfig.json', 'tsconfig.build.json'].map((f) => statSync(join(ROOT, f)).mtimeMs)];
  return Math.max(...inputs) > built ? 'a source is newer than the last build' : undefined;
}

/**
 * Runs tsc over src/ and stamps the build with the time it began (a source
 * saved during the build is newer). Returns tsc's exit status: type errors
 * still emit (they are the typecheck's to report); throws when nothing runnable came out.
 */
function buildCli() {
  const began = Date.now();
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.error !== undefined) throw r.error;
  if (!existsSync(CLI_ENTRY)) throw new Error(`tsc -p tsconfig.build.json exited ${r.status ?? r.signal} without writing ${CLI_ENTRY}; see the output above`);
  writeFileSync(STAMP, '');
  utimesSync(STAMP, began / 1000, began / 1000);
  return r.status ?? 1;
}

function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The lock when free (true), or false while another live process holds it. */
function tryLock() {
  mkdirSync(dirname(LOCK), { recursive: true });
  try {
    mkdirSync(LOCK);
    writeFileSync(join(LOCK, 'pid'), String(process.pid));
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  let holder = Number.NaN;
  try {
    holder = Number(readFileSync(join(LOCK, 'pid'), 'utf8'));
  } catch {
    // taken this instant, its pid not yet written
    return false;
  }
  try {
    process.kill(holder, 0);
    return false;
  } catch (error) {
    if (error.code !== 'ESRCH') return false;
  }
  // its holder was killed mid-build: take it over
  rmSync(LOCK, { recursive: true, force: true });
  return tryLock();
}

/**
 * Builds dist/ (with `ifStale`, only when it is stale), one process at a time;
 * returns tsc's exit status (0 when there was nothing to do).
 */
export function ensureCli({ ifStale = true } = {}) {
  if (ifStale && cliStale() === undefined) return 0;
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (!tryLock()) {
    if (Date.now() > deadline) throw new Error(`${LOCK} held for ${LOCK_WAIT_MS / 1000} s; remove it if no build is running`);
    sleepSync(200);
  }
  try {
    const why = cliStale();
    if (ifStale && why === undefined) return 0;
    if (ifStale) say(`${why}: building src/ into dist/ (tsc -p tsconfig.build.json)`);
    const status = buildCli();
    if (ifStale && status !== 0) say(`tsc exited ${status}; running what it emitted`);
    return status;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    const status = ensureCli({ ifStale: process.argv.includes('--if-stale') });
    if (!process.argv.includes('--if-stale')) process.exitCode = status;
  } catch (error) {
    say(error instanceof Error ? error.message : String(error));
    process.exit(1);
  }
}
