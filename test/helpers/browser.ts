/**
 * Browser tests: Debian's chromium driven by playwright-core (no browser
 * download). One browser per test file (`useBrowser(test)`), a fresh page per
 * test; every console error or uncaught exception of the page fails the test;
 * screenshots go to test-artifacts/<test file>/ to be looked at, never compared.
 *
 * Chromium is installed when missing: as root with apt-get (once: the other
 * files find it there), otherwise the file's tests are skipped with the
 * apt-get line to run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ExecutionContext, Implementation, TestFn } from 'ava';
import { type Browser, chromium, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM_BIN = '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const ARTIFACTS = join(ROOT, 'test-artifacts');
const INSTALL = 'apt-get install -y --no-install-recommends chromium';
const INSTALL_LOCK = join(tmpdir(), 'rezolus-chromium-install.lock');

function say(line: string): void {
  process.stderr.write(`[browser] ${line}\n`);
}

/**
 * Makes sure /usr/bin/chromium is there: installs Debian's package as root
 * (apt-get update first; one process at a time, under a lock file; npm test's
 * set-up installs it before any test file runs).
 * Returns undefined when it is there, else why the browser tests are skipped.
 */
export function ensureChromium(): string | undefined {
  if (existsSync(CHROMIUM_BIN)) return undefined;
  if (process.getuid?.() !== 0) return `${CHROMIUM_BIN} is missing and this is not root: run "sudo ${INSTALL}"`;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  say(`installing chromium (${INSTALL}): about a minute and a half`);
  // browser test files load at once: one installs under the lock, the others wait and find it there
  const script = `[ -x ${CHROMIUM_BIN} ] || { apt-get update -qq; apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 chromium fonts-dejavu-core; }`;
  const r = spawnSync('flock', [INSTALL_LOCK, 'sh', '-c', script], { env, stdio: 'inherit', timeout: 900_000 });
  if (existsSync(CHROMIUM_BIN)) return undefined;
  return `"${INSTALL}" failed (status ${r.status ?? r.signal ?? r.error?.message}); the browser tests need ${CHROMIUM_BIN}`;
}

/** Builds the page's bundle (dist/viewer/web/) when it is missing or older than src/viewer/web/. */
export function ensureWebBundle(): void {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-web.mjs'), '--if-stale', '--no-typecheck'], { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/build-web.mjs failed:\n${r.stdout}${r.stderr}`);
}

export interface TestPage {
  readonly page: Page;
  /** console errors and uncaught exceptions so far, one line each */
  readonly errors: string[];
  /** saves a full-page PNG as test-artifacts/<file>/<name>.png; returns its path */
  shot(name: string): Promise<string>;
}

export interface BrowserHandle {
  /** undefined in a test: the file is skipped (the reason was printed) */
  readonly skipReason: string | undefined;
  /**
   * Runs `fn` on a new page (1400×900 unless given) and closes it; fails the
   * test on any console error or page exception, listed, but those matching
   * `expectErrors` (a test of an error path: the browser logs a 404 it fetched).
   */
  withPage<T>(t: ExecutionContext, fn: (p: TestPage) => Promise<T>, options?: PageOptions): Promise<T>;
}

export interface PageOptions {
  readonly viewport?: { readonly width: number; readonly height: number };
  readonly expectErrors?: RegExp;
}

function consoleLine(msg: ConsoleMessage): string {
  const loc = msg.location();
  return `console.error: ${msg.text()}${loc.url === '' ? '' : ` (${loc.url}:${loc.lineNumber})`}`;
}

/**
 * Registers the file's browser: launched before its tests, closed after.
 * Register the tests with the handle's `serial` (one browser, one page at a
 * time): without chromium they are skipped, the reason printed once.
 */
export function useBrowser<C>(test: TestFn<C>, testFile: string): BrowserHandle & { readonly serial: (title: string, impl: Implementation<[], C>) => void } {
  const skipReason = ensureChromium();
  const dir = join(ARTIFACTS, basename(fileURLToPath(testFile)).replace(/\.test\.[jt]s$/, ''));
  let browser: Browser | undefined;
  if (skipReason !== undefined) say(`skipping ${basename(testFile)}: ${skipReason}`);
  else {
    test.before(async () => {
      ensureWebBundle();
      mkdirSync(dir, { recursive: true });
      browser = await chromium.launch({ executablePath: CHROMIUM_BIN });
    });
    test.after.always(async () => {
      await browser?.close();
    });
  }
  const handle: BrowserHandle = {
    skipReason,
    async withPage(t, fn, options = {}) {
      if (browser === undefined) throw new Error('the browser did not start (see the before hook)');
      const context = await browser.newContext({ viewport: options.viewport ?? { width: 1400, height: 900 } });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('console', (msg) => {
        if (msg.type() === 'error') errors.push(consoleLine(msg));
      });
      page.on('pageerror', (error) => errors.push(`uncaught: ${error.stack ?? error.message}`));
      const tp: TestPage = {
        page,
        errors,
        async shot(name) {
          const path = join(dir, `${name}.png`);
          await page.screenshot({ path, fullPage: true });
          t.log(`screenshot: ${path}`);
          return path;
        },
      };
      try {
        const out = await fn(tp);
        const expected = options.expectErrors;
        t.deepEqual(
          errors.filter((e) => expected === undefined || !expected.test(e)),
          [],
          'the page logged console errors',
        );
        return out;
      } finally {
        await context.close();
      }
    },
  };
  // a file without chromium: every test of it is a skip
  const serial = (title: string, impl: Implementation<[], C>): void => {
    if (skipReason === undefined) test.serial(title, impl);
    else test.serial.skip(title, impl);
  };
  return { ...handle, serial };
}
