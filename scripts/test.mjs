// npm test: set up what is missing, typecheck, run ava with TAP and end with
// one "N passed, N failed" line (the summary CI reads).
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, ensureDebian, ensureNpm } from './setup.mjs';

ensureNpm();
const missing = ensureDebian([
  ['/usr/sbin/nats-server', 'nats-server'],
  ['/usr/bin/promtool', 'prometheus'],
]);
if (missing.length > 0) process.stderr.write(`[test] tests that need ${missing.join(', ')} will fail\n`);

const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json'], {
  cwd: ROOT,
  stdio: 'inherit',
});
if (tsc.status !== 0) {
  process.stdout.write('0 passed, 1 failed\n');
  process.exit(1);
}

// `npm test -- --update` rewrites the golden files instead of comparing against them.
const extra = process.argv.slice(2);
const env = { ...process.env };
if (extra.includes('--update')) env.REZOLUS_UPDATE_GOLDEN = '1';
const args = [join(ROOT, 'node_modules', 'ava', 'entrypoints', 'cli.mjs'), '--tap', ...extra.filter((a) => a !== '--update')];
const ava = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
let passed = 0;
let failed = 0;
let buffered = '';
ava.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  buffered += chunk.toString();
  const lines = buffered.split('\n');
  buffered = lines.pop() ?? '';
  for (const line of lines) count(line);
});
function count(line) {
  // TAP test points; "# SKIP" and "# TODO" do not count as passed.
  if (/^ok \d+/.test(line) && !/# (SKIP|TODO)/i.test(line)) passed++;
  else if (/^not ok \d+/.test(line) && !/# TODO/i.test(line)) failed++;
}
ava.on('exit', (code) => {
  count(buffered);
  if (code !== 0 && failed === 0) failed = 1;
  process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
  process.exit(code ?? 1);
});
