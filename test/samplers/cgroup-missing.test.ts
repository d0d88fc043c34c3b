import test from 'ava';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KNOWN_MISSING, MissingFiles } from '../../src/samplers/cgroup/missing.js';
import { readPseudoFile } from '../../src/samplers/read.js';

function counted(): { read: (path: string) => string; opens: Map<string, number> } {
  const opens = new Map<string, number>();
  return {
    opens,
    read: (path) => {
      opens.set(path, (opens.get(path) ?? 0) + 1);
      return readPseudoFile(path);
    },
  };
}

test('a missing file is not opened again until retryAfter refreshes have passed; once there it is read at each refresh', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-missing-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'pids.current');
  const { read, opens } = counted();
  const missing = new MissingFiles(5);
  const refresh = (): string | undefined => {
    try {
      return missing.read(read, path);
    } catch (error) {
      return error === KNOWN_MISSING ? 'known' : (error as NodeJS.ErrnoException).code;
    } finally {
      missing.refreshed();
    }
  };
  t.is(refresh(), 'ENOENT');
  writeFileSync(path, '7\n');
  for (let i = 1; i < 5; i++) t.is(refresh(), 'known', `refresh ${i}: not tried`);
  t.is(opens.get(path), 1, 'one open in five refreshes');
  t.is(refresh(), '7\n', 'tried again at the fifth');
  t.is(refresh(), '7\n');
  t.is(opens.get(path), 3);
  t.is(missing.size, 0);
});

test('clear() has every missing file tried at its next read; errors other than ENOENT are not remembered; forgotten entries do not pile up', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-missing-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { read, opens } = counted();
  const missing = new MissingFiles(3);
  const a = join(dir, 'a');
  t.throws(() => missing.read(read, a), { code: 'ENOENT' });
  missing.refreshed();
  t.throws(() => missing.read(read, a), { is: KNOWN_MISSING });
  missing.clear();
  writeFileSync(a, 'x');
  t.is(missing.read(read, a), 'x', 'tried at once after clear()');

  // a directory read as a file fails with EISDIR: tried at every read
  t.throws(() => missing.read(read, dir), { code: 'EISDIR' });
  t.throws(() => missing.read(read, dir), { code: 'EISDIR' });
  t.is(opens.get(dir), 2);

  for (let i = 0; i < 50; i++) t.throws(() => missing.read(read, join(dir, `gone-${i}`)));
  t.is(missing.size, 50);
  missing.refreshed();
  t.is(missing.size, 50, 'not due yet');
  // pruned every retryAfter refreshes, of the entries due by then: gone within 2 x retryAfter
  for (let i = 0; i < 4; i++) missing.refreshed();
  t.is(missing.size, 0, 'each entry is dropped once it is due');
});
