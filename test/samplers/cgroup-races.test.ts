import test, { type ExecutionContext } from 'ava';
import fs, { existsSync, mkdirSync, rmdirSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { silentLogger } from '../../src/log/logger.js';
import { cgroupResourcesSampler } from '../../src/samplers/cgroup/sampler.js';
import type { Sampler } from '../../src/samplers/types.js';

// Races of cgroup_resources' kept listing (walk.ts TreeListing) and missing files (missing.ts)
// with cgroups made and removed meanwhile, forced by wrapping node:fs calls at the
// moment that matters. Real cgroups under rezolus-race-<pid> in the v1 pids hierarchy.

const PIDS = '/sys/fs/cgroup/pids';
const BASE = join(PIDS, `rezolus-race-${process.pid}`);
const usable = existsSync(join(PIDS, 'cgroup.procs')) && process.getuid?.() === 0;

function removeAll(): void {
  for (const d of ['X', 'D', 'E'].map((n) => join(BASE, n))) if (existsSync(d)) rmdirSync(d);
  if (existsSync(BASE)) rmdirSync(BASE);
}
test.after.always(removeAll);

/** The cgroups under BASE that have series in one refresh. */
async function published(sampler: Sampler): Promise<string[]> {
  const { points } = await sampler.refresh();
  const prefix = `/rezolus-race-${process.pid}`;
  return [...new Set(points.map((p) => p.labels['cgroup']).filter((c): c is string => c?.startsWith(prefix) === true))].sort().map((c) => c.slice(prefix.length) || '/');
}

/**
 * Runs `fn` with `name` of node:fs wrapped: the first call whose arguments `matches` runs
 * `act` first (which may throw, as the call would). Gives `fn`'s result and whether `act` ran.
 */
async function onFirst<T>(
  name: 'readdirSync' | 'readSync', matches: (args: unknown[]) => boolean, act: () => void, fn: () => Promise<T>,
): Promise<{ result: T; caught: boolean }> {
  const real = fs[name] as (...args: unknown[]) => unknown;
  let caught = false;
  (fs as unknown as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
    if (!caught && matches(args)) {
      caught = true;
      act();
    }
    return real.apply(this, args);
  };
  syncBuiltinESMExports();
  try {
    return { result: await fn(), caught };
  } finally {
    (fs as unknown as Record<string, unknown>)[name] = real;
    syncBuiltinESMExports();
  }
}

/**
 * A sampler over BASE holding X, checked to publish `/` and `/X`, handed to `fn` and closed after.
 * Fails the test where this machine lacks root or the v1 pids hierarchy.
 */
async function withSampler(t: ExecutionContext, fn: (sampler: Sampler) => Promise<void>): Promise<void> {
  if (!usable) return t.fail('needs root and the v1 pids hierarchy (this machine has both)');
  removeAll();
  mkdirSync(BASE);
  mkdirSync(join(BASE, 'X'));
  const sampler = await cgroupResourcesSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  try {
    t.deepEqual(await published(sampler), ['/', '/X']);
    await fn(sampler);
  } finally {
    await sampler.close?.();
  }
}

test.serial('a child removed between its parent\'s stat and read while listing, then another made: the new one is published at the next refresh', (t) =>
  withSampler(t, async (sampler) => {
    mkdirSync(join(BASE, 'E')); // a change: the next refresh lists again
    // E gone after the stat of BASE, before its read
    const during = await onFirst('readdirSync', (args) => args[0] === BASE, () => rmdirSync(join(BASE, 'E')), () => published(sampler));
    t.true(during.caught, 'the read of the parent was caught');
    t.deepEqual(during.result, ['/', '/X']);
    // as many subdirectories as the stat saw: only a count taken from the read tells
    mkdirSync(join(BASE, 'D'));
    t.deepEqual(await published(sampler), ['/', '/D', '/X']);
  }));

test.serial('a cgroup removed after the refresh checked the listing and made again before the next: its files are read again at once', (t) =>
  withSampler(t, async (sampler) => {
    // X's files fail with ENOENT in this refresh
    const during = await onFirst('readSync', () => true, () => rmdirSync(join(BASE, 'X')), () => published(sampler));
    t.true(during.caught);
    t.deepEqual(during.result, ['/']);
    mkdirSync(join(BASE, 'X')); // the same name, the same link counts: a new inode
    t.deepEqual(await published(sampler), ['/', '/X'], 'not left out as missing for 30 refreshes');
  }));

test.serial('a directory whose read fails (EMFILE) while listing is read again at the next refresh, not left out of the kept listing', (t) =>
  withSampler(t, async (sampler) => {
    mkdirSync(join(BASE, 'E')); // a change: the next refresh lists again
    const emfile = (): never => {
      throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
    };
    const during = await onFirst('readdirSync', (args) => args[0] === BASE, emfile, () => published(sampler));
    t.true(during.caught);
    t.deepEqual(during.result, ['/'], 'its children could not be listed');
    t.deepEqual(await published(sampler), ['/', '/E', '/X'], 'listed again once it can be read');
  }));
