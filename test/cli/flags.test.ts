/**
 * Flags are checked against the config schema's KeySpec of the key they
 * override (one list of log levels, one interval minimum), and the messages
 * name the flag; main() refuses bad flags with exit 2 before anything starts.
 */
import test from 'ava';
import { AGENT_SPEC } from '../../src/config/agent.js';
import { logSection, validateFlag } from '../../src/config/schema.js';
import { ConfigError } from '../../src/errors.js';
import { durationFlag, keySpec, levelFlag } from '../../src/cli/flags.js';
import { main, MODES } from '../../src/cli/main.js';
import { LIST_OPTIONS, OPTIONS } from '../../src/cli/mode.js';
import { runRezolus } from '../helpers/rezolus-cli.js';

const LEVEL = keySpec(logSection, 'level');
const INTERVAL = keySpec(AGENT_SPEC.defaults, 'interval');

test('--log-level takes the schema\'s levels and names the flag otherwise', (t) => {
  if (LEVEL.type !== 'enum') return t.fail('[log] level is an enum');
  for (const level of LEVEL.values) t.is(levelFlag(level) as string | undefined, level);
  t.is(levelFlag(undefined), undefined);
  const error = t.throws(() => levelFlag('loud'), { instanceOf: ConfigError });
  t.is(error?.message, `--log-level must be one of ${LEVEL.values.join(', ')}, got "loud"`);
});

test('--interval takes the minimum of the agent\'s interval key (10ms) and names the flag', (t) => {
  if (INTERVAL.type !== 'duration') return t.fail('[defaults] interval is a duration');
  t.is(INTERVAL.minMs, 10);
  t.is(durationFlag(INTERVAL, '10ms', '--interval'), 10);
  t.is(durationFlag(INTERVAL, '1s', '--interval'), 1000);
  for (const bad of ['5ms', '9.5ms', 'soon', '-1s', '']) {
    const error = t.throws(() => durationFlag(INTERVAL, bad, '--interval'), { instanceOf: ConfigError });
    t.is(error?.message, `--interval must be a duration of at least 10ms such as "100ms" or "1s", got "${bad}"`);
  }
});

test('validateFlag keeps the schema\'s message for the other types, with the flag in place of file and key', (t) => {
  const listen = keySpec(AGENT_SPEC.http, 'listen');
  t.deepEqual(validateFlag(listen, '127.0.0.1:1', '--listen'), { host: '127.0.0.1', port: 1 });
  t.throws(() => validateFlag(listen, 'nowhere', '--listen'), { instanceOf: ConfigError, message: '--listen must be HOST:PORT such as "0.0.0.0:4242", got "nowhere"' });
});

/** main() with stdout and stderr captured. */
async function run(argv: readonly string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const write = process.stderr.write;
  process.stderr.write = ((chunk: string | Uint8Array): boolean => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await main(argv), stderr };
  } finally {
    process.stderr.write = write;
  }
}

test('main refuses a bad flag with exit 2 and one line naming it, before anything starts', async (t) => {
  const loud = await run(['agent', '--log-level', 'loud', '--nats', 'nats://127.0.0.1:1']);
  t.is(loud.code, 2);
  t.is(loud.stderr, `rezolus agent: --log-level must be one of ${(LEVEL as { values: readonly string[] }).values.join(', ')}, got "loud"\n`);
  const fast = await run(['exporter', '--interval', '5ms', '--nats', 'nats://127.0.0.1:1']);
  t.is(fast.code, 2);
  t.regex(fast.stderr, /^rezolus exporter: --interval must be a duration of at least 10ms .*"5ms"\n$/);
  const negative = await run(['hindsight', '--interval', '-1s']);
  t.is(negative.code, 2);
  t.regex(negative.stderr, /--interval must be a duration of at least 10ms .*"-1s"/);
  const foreign = await run(['agent', '--listen', '127.0.0.1:1']);
  t.is(foreign.code, 2);
  t.is(foreign.stderr, 'rezolus agent: option --listen is not known to "rezolus agent" (rezolus agent --help lists the options)\n');
  const sub = await run(['hindsight', 'later']);
  t.is(sub.code, 2);
  t.regex(sub.stderr, /unknown hindsight subcommand "later"/);
  t.is((await run(['toString'])).code, 2, 'a mode is an own key of the table');
});

/** main() with stdout captured too. The tests that capture run serially: the capture replaces process-wide writes. */
async function runOut(argv: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string | Uint8Array): boolean => {
    stdout += chunk.toString();
    return true;
  }) as typeof process.stdout.write;
  try {
    return { ...(await run(argv)), stdout };
  } finally {
    process.stdout.write = write;
  }
}

test.serial('every mode refuses an option given twice with exit 2 and one line naming both values, before anything starts', async (t) => {
  let checked = 0;
  for (const [name, mode] of Object.entries(MODES)) {
    for (const option of mode.options) {
      if (OPTIONS[option].type !== 'string' || LIST_OPTIONS.has(option)) continue;
      const r = await run([name, `--${option}`, 'a', `--${option}`, 'b']);
      t.is(r.code, 2, `${name} --${option} twice`);
      const label = option === 'output' ? '-o/--output' : `--${option}`;
      t.true(r.stderr.startsWith(`rezolus ${name}: ${label} given twice (a, b); give it once`), r.stderr);
      t.is(r.stderr.split('\n').length, 2, `one line: ${r.stderr}`);
      checked++;
    }
  }
  t.true(checked > 40, `${checked} mode and option pairs`);
  const thrice = await run(['record', '-o', 'a.parquet', '--output', 'b.parquet', '-o', 'c.parquet']);
  t.is(thrice.stderr, 'rezolus record: -o/--output given 3 times (a.parquet, b.parquet, c.parquet); give it once (rezolus record --help lists the options)\n');
  const host = await run(['record', '--host', 'a', '--host', 'b']);
  t.is(host.stderr, 'rezolus record: --host given twice (a, b); give it once, or --hosts a,b for all of them (rezolus record --help lists the options)\n');
});

test.serial('a list option given twice is one list: --hosts a --hosts b is --hosts a,b', async (t) => {
  const r = await runOut(['nats-auth', '--hosts', 'web-1', '--hosts', 'web-2']);
  t.is(r.code, 0, r.stderr);
  t.regex(r.stdout, /rezolus\.metrics\.web-1\.>/);
  t.regex(r.stdout, /rezolus\.metrics\.web-2\.>/);
  t.deepEqual([...LIST_OPTIONS].sort(), ['hosts', 'nats'], 'the comma-separated ones');
});

test.serial('through the command line: rezolus record --host a --host b exits 2 with one line', async (t) => {
  const r = await runRezolus('record', '--host', 'a', '--host', 'b');
  t.is(r.code, 2);
  t.is(r.stderr, 'rezolus record: --host given twice (a, b); give it once, or --hosts a,b for all of them (rezolus record --help lists the options)\n');
});
