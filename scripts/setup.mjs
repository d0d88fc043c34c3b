// Installs what the project needs on a fresh machine: npm packages, and Debian
// packages when missing and running as root (a clear message otherwise).
// Plain JavaScript with no dependencies: it runs before node_modules exists.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCli } from './build-cli.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.error) throw r.error;
  return r.status ?? 1;
}

function say(line) {
  process.stderr.write(`[setup] ${line}\n`);
}

/**
 * package.json's dependencies that node_modules lacks, or holds at another
 * version than the exact one pinned (a range is only checked for presence).
 */
function missingPackages() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const wanted = Object.entries({ ...pkg.dependencies, ...pkg.devDependencies });
  return wanted
    .filter(([name, version]) => {
      const file = join(ROOT, 'node_modules', name, 'package.json');
      if (!existsSync(file)) return true;
      return /^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version) && JSON.parse(readFileSync(file, 'utf8')).version !== version;
    })
    .map(([name]) => name);
}

/**
 * Installs npm packages when node_modules is missing or older than the lock
 * file, or lacks a package that package.json lists. `npm ci` installs exactly
 * the lock (which lists every platform's prebuilt packages, so it never
 * changes); when package.json and the lock disagree (a dependency added
 * without a new lock), `npm ci` refuses and `npm install` brings them together.
 */
export function ensureNpm() {
  const lock = join(ROOT, 'package-lock.json');
  const marker = join(ROOT, 'node_modules', '.package-lock.json');
  const fresh = existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs;
  const missing = fresh ? missingPackages() : [];
  if (fresh && missing.length === 0) return;
  say(`installing npm packages (npm ci)${missing.length > 0 ? `: ${missing.join(', ')} missing or at another version` : ''}`);
  if (run('npm', ['ci', '--no-audit', '--no-fund']) === 0) return;
  say('npm ci failed (package.json and package-lock.json disagree?); trying npm install');
  if (run('npm', ['install', '--no-audit', '--no-fund']) !== 0) {
    throw new Error('npm install failed; see the output above');
  }
}

let aptUpdated = false;

/**
 * Makes sure each [binary, debianPackage] pair is present. As root, installs
 * the missing packages with apt-get; otherwise says what to install and
 * returns the missing binaries.
 */
export function ensureDebian(pairs) {
  const missing = pairs.filter(([bin]) => !existsSync(bin));
  if (missing.length === 0) return [];
  const pkgs = [...new Set(missing.map(([, pkg]) => pkg))];
  if (process.getuid?.() !== 0) {
    say(`missing ${missing.map(([b]) => b).join(', ')}: run "sudo apt-get install -y ${pkgs.join(' ')}"`);
    return missing.map(([b]) => b);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    say('apt-get update');
    run('apt-get', ['update', '-qq'], { env });
    aptUpdated = true;
  }
  say(`apt-get install ${pkgs.join(' ')}`);
  run('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...pkgs], { env });
  return missing.filter(([bin]) => !existsSync(bin)).map(([b]) => b);
}

/** Compiles TypeScript to dist/ (incremental; scripts/build-cli.mjs, which stamps the build for the tests' staleness check). */
export function build() {
  if (ensureCli({ ifStale: false }) !== 0) {
    throw new Error('TypeScript build failed; see the output above');
  }
}
