import test from 'ava';
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

/** Runs `fn` with `name` of node:fs replaced by a wrapper that calls `before(args)` first. */
async function wrapped<T>(name: 'readdirSync' | 'readSync', before: (args: unknown[]) => void, fn: () => Promise<T>): Promise<T> {
  const real = fs[name] as (...args: unknown[]) => unknown;
  (fs as unknown as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
    before(args);
    return real.apply(this, args);
  };
  syncBuiltinESMExports();
  try {
    return await fn();
  } finally {
    (fs as unknown as Record<string, unknown>)[name] = real;
    syncBuiltinESMExports();
  }
}

async function start(): Promise<Sampler> {
  removeAll();
  mkdirSync(BASE);
  mkdirSync(join(BASE, 'X'));
  return cgroupResourcesSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
}

test.serial('a child removed between its parent\'s stat and read while listing, then another made: the new one is published at the next refresh', async (t) => {
  if (!usable) return t.fail('needs root and the v1 pids hierarchy (this machine has both)');
  const sampler = await start();
  try {
    t.deepEqual(await published(sampler), ['/', '/X']);
    mkdirSync(join(BASE, 'E')); // a change: the next refresh lists again
    let armed = true;
    const during = await wrapped('readdirSync', (args) => {
      if (armed && args[0] === BASE) {
        armed = false;
        rmdirSync(join(BASE, 'E')); // gone after the stat of BASE, before its read
      }
    }, () => published(sampler));
    t.false(armed, 'the read of the parent was caught');
    t.deepEqual(during, ['/', '/X']);
    // as many subdirectories as the stat saw: only a count taken from the read tells
    mkdirSync(join(BASE, 'D'));
    t.deepEqual(await published(sampler), ['/', '/D', '/X']);
  } finally {
    await sampler.close?.();
  }
});

test.serial('a cgroup removed after the refresh checked the listing and made again before the next: its files are read again at once', async (t) => {
  if (!usable) return t.fail('needs root and the v1 pids hierarchy (this machine has both)');
  const sampler = await start();
  try {
    t.deepEqual(await published(sampler), ['/', '/X']);
    let armed = true;
    const during = await wrapped('readSync', () => {
      if (armed) {
        armed = false;
        rmdirSync(join(BASE, 'X')); // its files fail with ENOENT in this refresh
      }
    }, () => published(sampler));
    t.false(armed);
    t.deepEqual(during, ['/']);
    mkdirSync(join(BASE, 'X')); // the same name, the same link counts: a new inode
    t.deepEqual(await published(sampler), ['/', '/X'], 'not left out as missing for 30 refreshes');
  } finally {
    await sampler.close?.();
  }
});

test.serial('a directory whose read fails (EMFILE) while listing is read again at the next refresh, not left out of the kept listing', async (t) => {
  if (!usable) return t.fail('needs root and the v1 pids hierarchy (this machine has both)');
  const sampler = await start();
  try {
    t.deepEqual(await published(sampler), ['/', '/X']);
    mkdirSync(join(BASE, 'E')); // a change: the next refresh lists again
    let armed = true;
    const during = await wrapped('readdirSync', (args) => {
      if (armed && args[0] === BASE) {
        armed = false;
        throw Object.assign(new Error('EMFILE: too many open files'), { code: 'EMFILE' });
      }
    }, () => published(sampler));
    t.false(armed);
    t.deepEqual(during, ['/'], 'its children could not be listed');
    t.deepEqual(await published(sampler), ['/', '/E', '/X'], 'listed again once it can be read');
  } finally {
    await sampler.close?.();
  }
});
