// registerWebRoutes: the page and its bundle from one directory, with their
// content types; nothing else from it or around it; a clear 500 without a build.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import Fastify from 'fastify';
import { registerWebRoutes, WEB_DIR } from '../../src/viewer/static.js';

function site(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'rezolus-static-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return dir;
}

test('WEB_DIR is dist/viewer/web of this checkout, from src/ under tsx as from dist/', (t) => {
  t.true(WEB_DIR.endsWith(join('dist', 'viewer', 'web')), WEB_DIR);
  t.false(WEB_DIR.includes(join('src', 'viewer')));
});

test('/ is index.html; the bundle files have their content types', async (t) => {
  const dir = site({ 'index.html': '<!doctype html><title>x</title>', 'main.js': 'export {}', 'main.css': 'body{}' });
  const app = Fastify();
  registerWebRoutes(app, dir);
  try {
    const root = await app.inject('/');
    t.is(root.statusCode, 200);
    t.is(root.headers['content-type'], 'text/html; charset=utf-8');
    t.is(root.body, '<!doctype html><title>x</title>');
    t.is(root.headers['cache-control'], 'no-cache');
    const js = await app.inject('/web/main.js');
    t.is(js.statusCode, 200);
    t.is(js.headers['content-type'], 'text/javascript; charset=utf-8');
    t.is(js.body, 'export {}');
    const css = await app.inject('/web/main.css');
    t.is(css.headers['content-type'], 'text/css; charset=utf-8');
    t.is((await app.inject('/index.html')).statusCode, 200);
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no listing, no path out of the directory, no unknown file types', async (t) => {
  const dir = site({ 'index.html': 'x', 'main.js': 'y', 'secret.txt': 'no', '.hidden.js': 'no' });
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'a.js'), 'no');
  const app = Fastify();
  registerWebRoutes(app, dir);
  try {
    for (const url of ['/web/', '/web', '/web/secret.txt', '/web/.hidden.js', '/web/sub/a.js', '/web/..%2Fpackage.json', '/web/%2e%2e%2findex.html', '/web/sub', '/web/missing.js', '/package.json']) {
      const r = await app.inject(url);
      t.is(r.statusCode, 404, url);
      t.notRegex(r.body, /^(y|no)$/, url);
    }
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('without a build, / answers 500 and names npm run build', async (t) => {
  const app = Fastify();
  registerWebRoutes(app, join(tmpdir(), 'rezolus-no-such-dir-for-static-test'));
  try {
    const r = await app.inject('/');
    t.is(r.statusCode, 500);
    t.regex(r.body, /npm run build/);
    t.is((await app.inject('/web/main.js')).statusCode, 404);
  } finally {
    await app.close();
  }
});
