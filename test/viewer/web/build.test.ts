// The page builds: src/viewer/web/ typechecks with the DOM lib (the root
// tsconfig leaves it out, so this is where npm test catches its type errors),
// and scripts/build-web.mjs bundles it into index.html, main.js and main.css
// (uPlot's CSS inside) within the 150 KB gzip budget, with no CDN.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import test from 'ava';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const run = promisify(execFile);

test('src/viewer/web typechecks with its own tsconfig (DOM lib)', async (t) => {
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = await run(process.execPath, [tsc, '-p', join(ROOT, 'src', 'viewer', 'web', 'tsconfig.json')], { cwd: ROOT }).catch(
    (error: { stdout?: string; stderr?: string }) => ({ stdout: error.stdout ?? '', stderr: error.stderr ?? 'tsc failed' }),
  );
  t.is(`${r.stdout}${r.stderr}`.trim(), '');
});

test('the bundle: index.html, main.js, main.css, no CDN, within 150 KB gzip', async (t) => {
  const out = mkdtempSync(join(tmpdir(), 'rezolus-web-build-'));
  try {
    const r = await run(process.execPath, [join(ROOT, 'scripts', 'build-web.mjs'), '--no-typecheck', '--out', out], { cwd: ROOT });
    t.regex(r.stderr, /total [\d.]+ KB gzip/);
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    const js = readFileSync(join(out, 'main.js'));
    const css = readFileSync(join(out, 'main.css'), 'utf8');
    t.regex(html, /<script type="module" src="web\/main\.js">/);
    t.regex(html, /<link rel="stylesheet" href="web\/main\.css">/);
    t.regex(html, /<link rel="icon" href="data:,">/);
    t.notRegex(html, /https?:\/\//, 'the page loads nothing from elsewhere');
    t.regex(css, /\.uplot/, "uPlot's CSS is in the bundle");
    t.notRegex(css, /@import/);
    const gzip = gzipSync(js).length + gzipSync(css).length + gzipSync(html).length;
    t.log(`bundle: ${(js.length / 1024).toFixed(1)} KB js, ${(gzip / 1024).toFixed(1)} KB gzip in all`);
    t.true(gzip <= 150 * 1024, `${gzip} bytes gzip`);
    // minified: one long line, not the sources
    t.true(js.toString('utf8').split('\n').length < 20);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
