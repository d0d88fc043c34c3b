import test from 'ava';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generatedFiles, ROOT } from '../scripts/gen-docs.js';
import { loadAgentConfig } from '../src/config/agent.js';
import { loadExporterConfig } from '../src/config/exporter.js';
import { loadUpConfig } from '../src/config/up.js';
import { SAMPLERS } from '../src/samplers/registry.js';

for (const [path, expected] of Object.entries(generatedFiles())) {
  test(`${path} is up to date (run npm run docs)`, (t) => {
    t.is(readFileSync(join(ROOT, path), 'utf8'), expected);
  });
}

test('the shipped config files load and equal the built-in defaults', (t) => {
  const withFile = loadAgentConfig(join(ROOT, 'config/agent.toml'), SAMPLERS);
  const without = loadAgentConfig(undefined, SAMPLERS);
  t.deepEqual({ ...withFile, file: '' }, { ...without, file: '' });
  t.deepEqual({ ...loadExporterConfig(join(ROOT, 'config/exporter.toml')), file: '' }, { ...loadExporterConfig(undefined), file: '' });
  const up = loadUpConfig(join(ROOT, 'config/up.toml'), undefined);
  t.is(up.agentConfig, join(ROOT, 'config/agent.toml'));
  t.is(up.dataDir, './data');
});

test('every sampler is listed once, sorted, with every metric declared once across samplers', (t) => {
  const names = SAMPLERS.map((s) => s.name);
  t.deepEqual(names, [...names].sort());
  t.is(new Set(names).size, names.length);
  const metrics = SAMPLERS.flatMap((s) => s.metrics.map((m) => m.name));
  t.is(new Set(metrics).size, metrics.length, 'a metric name is declared by two samplers');
  t.true(metrics.length > 150);
});
