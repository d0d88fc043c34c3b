/**
 * How tests start the rezolus CLI: the build in dist/ (`node
 * dist/cli/rezolus.js`), as bin/rezolus.js runs it. Not src/ through tsx:
 * every process would load the hooks thread and transform the modules
 * again (and the Parquet writer's worker a second tsx of its own), three
 * times the CPU of the built CLI, which a loaded 2-vCPU machine running
 * tests side by side turned into 15 s start-ups (test/bench/cli-start.ts).
 *
 * The first call builds dist/ when a source is newer than the last build
 * (scripts/build-cli.mjs --if-stale; `npm test` builds before ava), so
 * `npx ava some.test.ts` after an edit to src/ runs the edited code.
 */
import { spawn, spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The compiled CLI that bin/rezolus.js runs. */
export const CLI_ENTRY = join(ROOT, 'dist', 'cli', 'rezolus.js');

let built = false;

/** Builds dist/ once per test process when it is older than src/; throws with tsc's output when it cannot. */
function ensureBuilt(): void {
  if (built) return;
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-cli.mjs'), '--if-stale'], { cwd: ROOT, encoding: 'utf8' });
  const output = `${r.stdout}${r.stderr}`;
  if (r.status !== 0) throw new Error(`scripts/build-cli.mjs --if-stale failed (${r.status ?? r.signal}); the CLI in dist/ cannot run:\n${output}`);
  // "building ...", and tsc's type errors if any (the build still emitted)
  if (output !== '') process.stderr.write(output);
  built = true;
}

/** The arguments after process.execPath that run `rezolus ...args`: spawn(process.execPath, rezolusArgv('record', ...)). */
export function rezolusArgv(...args: string[]): string[] {
  ensureBuilt();
  return [CLI_ENTRY, ...args];
}

/** Runs the CLI to its end: exit code, stdout and stderr. */
export function runRezolus(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runRezolusWithEnv({}, ...args);
}

/** runRezolus with `env` over this process's environment (credentials, as a Job gives them). */
export function runRezolusWithEnv(env: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, rezolusArgv(...args), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
