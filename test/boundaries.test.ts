// The import boundaries of .dependency-cruiser.cjs hold over src/, and the
// check bites: on test/fixtures/boundaries/, a small tree that breaks each rule
// once, it reports exactly those breaks.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
const CONFIG = join(ROOT, '.dependency-cruiser.cjs');
const FIXTURE = join(ROOT, 'test', 'fixtures', 'boundaries');
/** a cruise takes about 4 s of CPU; a busy 2-core machine can make that a minute */
const TIMEOUT_MS = 5 * 60_000;

interface Violation {
  readonly type: string;
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string; readonly severity: string };
  readonly cycle?: readonly { readonly name: string }[];
}

interface Cruise {
  readonly violations: readonly Violation[];
  readonly modules: number;
  /** every forbidden rule of the config, name -> its comment */
  readonly rules: ReadonlyMap<string, string>;
  readonly seconds: number;
}

/** Runs dependency-cruiser on `src` in `cwd` with the project's config (its paths are relative to cwd). */
function cruise(cwd: string): Promise<Cruise> {
  const args = [CLI, 'src', '--config', CONFIG, '--output-type', 'json'];
  const start = performance.now();
  return new Promise((resolve, reject) => {
    // It exits with the number of errors found: the JSON on stdout is the answer either way.
    execFile(process.execPath, args, { cwd, maxBuffer: 256 * 1024 * 1024 }, (error, stdout, stderr) => {
      let out: {
        summary: {
          violations: Violation[];
          totalCruised: number;
          ruleSetUsed: { forbidden?: { name: string; comment?: string }[] };
        };
      };
      try {
        out = JSON.parse(stdout);
      } catch {
        reject(new Error(`dependency-cruiser in ${cwd} gave no report (${error?.message ?? 'exit 0'}):\n${stderr}`));
        return;
      }
      const rules = new Map((out.summary.ruleSetUsed.forbidden ?? []).map((r) => [r.name, r.comment ?? ''] as const));
      resolve({ violations: out.summary.violations, modules: out.summary.totalCruised, rules, seconds: (performance.now() - start) / 1000 });
    });
  });
}

/** `rule: from → to`, a cycle as the whole loop from its smallest module, a package as node_modules/… */
function describe(v: Violation): string {
  const short = (p: string): string => p.replace(/^.*?node_modules\//, 'node_modules/');
  if (v.cycle !== undefined && v.cycle.length > 0) {
    // dependency-cruiser lists the cycle after `from`, ending with `from` itself.
    const loop = v.cycle.map((c) => c.name);
    const first = loop.indexOf([...loop].sort()[0] as string);
    const rotated = [...loop.slice(first), ...loop.slice(0, first)];
    return `${v.rule.name}: ${[...rotated, rotated[0]].join(' → ')}`;
  }
  return `${v.rule.name}: ${v.from} → ${short(v.to)}`;
}

test('src/ keeps its import boundaries: no cycles, samplers and frame apart from the bus, consumers apart from the producers', async (t) => {
  t.timeout(TIMEOUT_MS);
  const r = await cruise(ROOT);
  t.log(`cruised ${r.modules} modules in ${r.seconds.toFixed(1)} s`);
  t.true(r.modules >= 100, `only ${r.modules} modules cruised: is the config reading src/?`);
  const found = [...new Set(r.violations.map(describe))].sort();
  const why = [...new Set(r.violations.map((v) => v.rule.name))].map((name) => `  ${name}: ${r.rules.get(name) ?? ''}`);
  t.deepEqual(
    found,
    [],
    `${found.length} boundary violation(s) (the same list: npm run boundaries):\n${found.map((f) => `  ${f}`).join('\n')}\nthe rules:\n${why.join('\n')}`,
  );
});

test('the boundary check bites: each forbidden import and both kinds of cycle in the fixture tree are reported, and nothing else', async (t) => {
  t.timeout(TIMEOUT_MS);
  const r = await cruise(FIXTURE);
  t.log(`cruised ${r.modules} fixture modules in ${r.seconds.toFixed(1)} s`);
  t.deepEqual([...new Set(r.violations.map(describe))].sort(), [
    'consumers-not-to-producers: src/exporter/app.ts → src/samplers/cpu.ts',
    'frame-not-to-bus-or-samplers: src/frame/codec.ts → src/samplers/cpu.ts',
    'no-cycle: src/record/durable.ts → src/record/main.ts → src/record/durable.ts',
    'no-type-cycle: src/metrics/point.ts → src/metrics/unit.ts → src/metrics/point.ts',
    'not-to-unresolvable: src/hindsight/main.ts → ./gone.js',
    'parquet-not-to-nats: src/parquet/write.ts → node_modules/@nats-io/nats-core/lib/mod.js',
    'samplers-not-to-bus-or-frame: src/samplers/cpu.ts → src/bus/publish.ts',
  ]);
  t.true(
    r.violations.every((v) => v.rule.severity === 'error'),
    'every rule is an error, so `npm run boundaries` fails on it',
  );
  // A rule added to the config without a fixture that breaks it would go unproven.
  t.deepEqual([...new Set(r.violations.map((v) => v.rule.name))].sort(), [...r.rules.keys()].sort());
});
