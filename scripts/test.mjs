// npm test: set up what is missing, typecheck, lint, run ava with TAP and end
// with one "N passed, N failed" line (the summary CI reads).
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureCli } from './build-cli.mjs';
import { buildNative } from './build-native.mjs';
import { ensureWeb } from './build-web.mjs';
import { ROOT, ensureDebian, ensureNpm } from './setup.mjs';

ensureNpm();
const missing = ensureDebian([
  ['/usr/sbin/nats-server', 'nats-server'],
  ['/usr/bin/promtool', 'prometheus'],
  ['/usr/bin/prometheus-alertmanager', 'prometheus-alertmanager'], // test/alert/alertmanager.test.ts
  // the viewer's browser tests (test/helpers/browser.ts; playwright-core drives it)
  ['/usr/bin/chromium', 'chromium'],
  // test/deploy/: the validators of docker/, systemd/ and k8s/ (systemd-analyze comes with systemd)
  ['/usr/bin/docker-compose', 'docker-compose'],
  ['/usr/bin/shellcheck', 'shellcheck'],
  ['/usr/bin/systemd-analyze', 'systemd'],
  // test/agent/wakeups.test.ts counts the agent's event-loop sleeps
  ['/usr/bin/strace', 'strace'],
]);
if (missing.length > 0) process.stderr.write(`[test] tests that need ${missing.join(', ')} will fail\n`);
buildNative();
// the viewer's page bundle (dist/viewer/web/): the browser tests load it; a
// failed build fails test/viewer/web/build.test.ts, the run goes on
try {
  await ensureWeb();
} catch (error) {
  process.stderr.write(`[test] the viewer page did not build: ${error instanceof Error ? error.message : String(error)}\n`);
}

const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json'], {
  cwd: ROOT,
  stdio: 'inherit',
});
if (tsc.status !== 0) {
  process.stdout.write('0 passed, 1 failed\n');
  process.exit(1);
}

// The compiled CLI (dist/): tests start `node dist/cli/rezolus.js`
// (test/helpers/rezolus-cli.ts), not src/ through tsx, which costs each
// process three times the CPU. Built here, before ava runs test files side by side.
try {
  ensureCli();
} catch (error) {
  process.stderr.write(`[test] the CLI did not build: ${error instanceof Error ? error.message : String(error)}\n`);
}

// Lint (biome.json; `npm run lint`): findings count as one failed test, and
// the suite still runs. The import boundaries are test/boundaries.test.ts.
const lint = spawnSync(process.execPath, [join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome'), 'lint', '--error-on-warnings'], {
  cwd: ROOT,
  stdio: 'inherit',
});
const lintFailed = lint.status !== 0;
if (lintFailed) process.stderr.write('[test] lint failed: see above (npm run lint)\n');

// `npm test -- --update` rewrites the golden files instead of comparing against them.
const extra = process.argv.slice(2);
const env = { ...process.env };
if (extra.includes('--update')) env.REZOLUS_UPDATE_GOLDEN = '1';
const cli = join(ROOT, 'node_modules', 'ava', 'entrypoints', 'cli.mjs');
const avaArgs = extra.filter((a) => a !== '--update');
let passed = 0;
let failed = lintFailed ? 1 : 0;

/** Runs ava with TAP on stdout, counting test points; resolves with its exit code. */
function runAva(args) {
  return new Promise((resolve) => {
    const ava = spawn(process.execPath, [cli, '--tap', ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const before = failed;
    let buffered = '';
    ava.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) count(line);
    });
    ava.on('exit', (code) => {
      count(buffered);
      if (code !== 0 && failed === before) failed++;
      resolve(code ?? 1);
    });
  });
}

function count(line) {
  // TAP test points; "# SKIP" and "# TODO" do not count as passed.
  if (/^ok \d+/.test(line) && !/# (SKIP|TODO)/i.test(line)) passed++;
  else if (/^not ok \d+/.test(line) && !/# TODO/i.test(line)) failed++;
}

// The main suite, then (unless files were named) the quiet suite: tests that
// measure this machine's CPU and loopback traffic, one file at a time.
let code = await runAva(avaArgs);
if (!avaArgs.some((a) => !a.startsWith('-'))) {
  const quiet = await runAva(['--config', 'ava.quiet.config.mjs', ...avaArgs]);
  if (code === 0) code = quiet;
}
if (code === 0 && lintFailed) code = 1;
process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
process.exit(code);
