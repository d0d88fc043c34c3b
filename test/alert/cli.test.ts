/** `rezolus alert` and `rezolus alert check` as a user runs them: exit codes and the one line that says what is wrong. */
import test from 'ava';
import { ROOT, runRezolus } from '../helpers/rezolus-cli.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const DIR = mkdtempSync(join(tmpdir(), 'rezolus-alert-cli-'));
test.after.always(() => rmSync(DIR, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(DIR, name);
  writeFileSync(path, text);
  return path;
}

test('alert check accepts the shipped rules and lists them', async (t) => {
  const r = await runRezolus('alert', 'check', join(ROOT, 'config/alerts.toml'));
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /alerts\.toml: 7 rules found, SUCCESS/);
  t.regex(r.stdout, /runqueue_latency_high: p99\(scheduler_runqueue_latency\) over 10s > 5ms, clears past 2ms for 30s/);
});

test('alert check refuses a bad rule with exit 2, naming file, rule and key', async (t) => {
  const bad = file('bad.toml', '[[rule]]\nname = "mem"\nmetric = "memory_available"\nreduce = "p99"\nthreshold = "1GiB"\n');
  const r = await runRezolus('alert', 'check', bad);
  t.is(r.code, 2);
  t.is(r.stderr.trim().split('\n').length, 1, r.stderr);
  t.regex(r.stderr, /bad\.toml: rule "mem": reduce "p99" does not apply to memory_available, a gauge/);
  const unit = file('unit.toml', '[[rule]]\nname = "rq"\nmetric = "scheduler_runqueue_latency"\nreduce = "p99"\nthreshold = "5MiB"\n');
  const u = await runRezolus('alert', 'check', unit);
  t.is(u.code, 2);
  t.regex(u.stderr, /unit\.toml: rule "rq": threshold "5MiB" is not a value for p99 of scheduler_runqueue_latency \(nanoseconds\): write "1ms"/);
  const none = await runRezolus('alert', 'check');
  t.is(none.code, 2);
  t.regex(none.stderr, /usage: rezolus alert check FILE/);
});

test('alert refuses to start without rules, or with a capture directory it cannot write', async (t) => {
  const empty = file('empty.toml', '[general]\nevery = "1s"\n');
  const r = await runRezolus('alert', '--config', empty, '--nats', 'nats://127.0.0.1:1');
  t.is(r.code, 2);
  t.regex(r.stderr, /empty\.toml has no \[\[rule\]\]: nothing to evaluate/);
  const rules = file('rules.toml', '[[rule]]\nname = "mem"\nmetric = "memory_available"\nreduce = "min"\nop = "<"\nthreshold = "100MiB"\n');
  const c = await runRezolus('alert', '--config', rules, '--nats', 'nats://127.0.0.1:1', '-o', '/proc/rezolus-incidents');
  t.is(c.code, 2, c.stderr);
  t.regex(c.stderr, /\[capture\] dir \/proc\/rezolus-incidents cannot be written/);
  const help = await runRezolus('alert', '--help');
  t.is(help.code, 0);
  t.regex(help.stdout, /rezolus\.alerts\.<host>\.<rule>/);
});
