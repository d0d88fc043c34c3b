/**
 * `rezolus record`: hosts live from the bus, a past window (--since), one
 * agent's endpoint (URL) or a resumable durable consumer (--durable) into a
 * Parquet file; with `-- cmd args`, for the lifetime of that command, whose
 * exit status it returns. A terminal gets a progress line and a summary.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import type { LevelWithSilent } from 'pino';
import { DEFAULT_STREAM, hostToken } from '../bus/subjects.js';
import { HINDSIGHT_SPEC } from '../config/hindsight.js';
import { readNatsSecurity } from '../config/nats.js';
import type { KeySpec } from '../config/schema.js';
import { formatBytes, parseDuration } from '../config/units.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import type { CommandExit } from '../record/command.js';
import type { RecordConfig, RecordSummary, RunningRecord } from '../record/main.js';
import { totalSkipped } from '../sources/checks.js';
import { durationFlag, hostsFlag, keySpec, levelFlag, oneShotNats } from './flags.js';
import type { CliContext, CliMode, Flags } from './mode.js';
import { catchStopSignals } from './signals.js';

// record reads no config file; its flags take what hindsight's keys take (a snapshot is a record)
const INTERVAL = keySpec(HINDSIGHT_SPEC.general, 'interval');
const HOSTS = keySpec(HINDSIGHT_SPEC.general, 'hosts');
/** --duration has no config key anywhere: this is its only spec */
const DURATION: KeySpec = { type: 'duration', default: '', minMs: 10, doc: 'Stop a live recording after this long.' };

type Replay = NonNullable<RecordConfig['replay']>;
type Durable = NonNullable<RecordConfig['durable']>;

/** What the flags ask for, checked before anything connects. */
interface Plan {
  readonly hosts: string;
  /** an agent to poll instead of NATS */
  readonly url: string | undefined;
  readonly output: string;
  readonly durable: Durable | undefined;
  readonly replay: Replay | undefined;
  readonly durationMs: number | undefined;
  readonly intervalMs: number;
  readonly logLevel: LevelWithSilent;
}

/** A point in time: a duration ago (`10m`) or an RFC 3339 time; unix ms. */
export function timeFlag(value: string, flag: string, nowMs: number): number {
  const ago = parseDuration(value);
  if (ago !== undefined) return nowMs - ago;
  const at = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) throw new ConfigError(`--${flag} must be a duration ago such as "10m" or an RFC 3339 time such as "2026-11-22T10:00:00Z", got "${value}"`);
  return at;
}

/** --since/--until as a replay window, or undefined for a live recording. */
function replayWindow(flags: Flags): Replay | undefined {
  if (flags.since === undefined) {
    if (flags.until !== undefined) throw new ConfigError('--until needs --since');
    return undefined;
  }
  if (flags.duration !== undefined) throw new ConfigError('--duration is for live recordings; a replay ends at --until (default: now)');
  const now = Date.now();
  const since = timeFlag(flags.since, 'since', now);
  const until = flags.until === undefined ? now : timeFlag(flags.until, 'until', now);
  if (until <= since) throw new ConfigError(`--until must be after --since (got ${new Date(since).toISOString()} .. ${new Date(until).toISOString()})`);
  return { stream: flags.stream ?? DEFAULT_STREAM, sinceNs: BigInt(since) * 1_000_000n, untilNs: BigInt(until) * 1_000_000n };
}

/** `record --durable NAME`: its window (fixed at the first start; a restart must repeat the flags). */
async function durableSpec({ flags, command }: CliContext, name: string, url: string | undefined): Promise<Durable> {
  const { validDurableName } = await import('../bus/durable.js');
  if (!validDurableName(name)) throw new ConfigError(`--durable must be a consumer name of letters, digits, _ and - (at most 64), got "${name}"`);
  if (url !== undefined) throw new ConfigError('--durable records from the JetStream stream; it cannot be combined with an agent URL');
  if (command.length > 0) throw new ConfigError('--durable cannot wrap a command (after --): a restarted recorder cannot resume its lifetime');
  if (flags.since !== undefined && flags.duration !== undefined) throw new ConfigError('give --durable a window with --duration, or with --since/--until, not both');
  const window = flags.since !== undefined ? `since ${flags.since} until ${flags.until ?? 'now'}` : flags.duration !== undefined ? `duration ${flags.duration}` : 'until stopped';
  const w = flags.since === undefined ? undefined : replayWindow(flags);
  if (flags.since === undefined && flags.until !== undefined) throw new ConfigError('--until needs --since');
  return { name, stream: flags.stream ?? DEFAULT_STREAM, sinceNs: w?.sinceNs, untilNs: w?.untilNs, durationMs: durationFlag(DURATION, flags.duration, '--duration'), window };
}

/** Refuses an output file whose directory is missing or not writable, before anything is recorded. */
function checkOutputDir(output: string): void {
  const dir = dirname(output);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ConfigError(`-o ${output}: directory ${dir} does not exist`);
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    throw new ConfigError(`-o ${output}: directory ${dir} is not writable`);
  }
}

async function plan(ctx: CliContext): Promise<Plan> {
  const { flags, positionals, command } = ctx;
  if (flags.host !== undefined && flags.hosts !== undefined) throw new ConfigError('give --host or --hosts, not both');
  const hosts = hostsFlag(HOSTS, flags.hosts, '--hosts') ?? hostsFlag(HOSTS, flags.host, '--host') ?? hostToken(hostname());
  if (positionals.length > 2) throw new ConfigError(`expected at most an agent URL and an output file, got ${positionals.length} arguments`);
  const url = positionals[0];
  if (url !== undefined && !/^https?:\/\/[^/]/.test(url)) throw new ConfigError(`the agent URL must be http://HOST:PORT such as http://localhost:4241, got "${url}"`);
  if (url !== undefined && (flags.since !== undefined || flags.host !== undefined || flags.hosts !== undefined || flags.nats !== undefined || flags.stream !== undefined)) {
    throw new ConfigError('an agent URL records that agent live over HTTP, without NATS; it cannot be combined with --since, --host, --hosts, --nats or --stream');
  }
  const output = flags.output ?? positionals[1] ?? 'rezolus.parquet';
  if (!output.endsWith('.parquet')) throw new ConfigError(`-o must name a .parquet file, got "${output}"`);
  checkOutputDir(output);
  const durable = flags.durable === undefined ? undefined : await durableSpec(ctx, flags.durable, url);
  const replay = durable === undefined ? replayWindow(flags) : undefined;
  if (replay !== undefined && command.length > 0) throw new ConfigError('a command (after --) records its own lifetime live; it cannot be combined with --since');
  const durationMs = durationFlag(DURATION, flags.duration, '--duration');
  // on a terminal the progress line says what info logs would
  const logLevel = levelFlag(flags['log-level']) ?? (process.stderr.isTTY ? 'warn' : 'info');
  const intervalMs = durationFlag(INTERVAL, flags.interval, '--interval') ?? 1000;
  return { hosts, url, output, durable, replay, durationMs, intervalMs, logLevel };
}

/** `12 s, 40 frames, 12 rows, 1.2 MiB written` on one terminal line, every second; end() clears it. */
function progressLine(running: RunningRecord, startedMs: number, plural: (n: number, word: string) => string): { end(): void } {
  let shown = false;
  const timer = setInterval(() => {
    const p = running.progress();
    const written = p.bytes > 4 ? `, ${formatBytes(p.bytes)} written` : '';
    process.stderr.write(`\r\x1b[K  ${((Date.now() - startedMs) / 1000).toFixed(0)} s, ${plural(p.frames, 'frame')}, ${plural(p.rows, 'row')}${written}`);
    shown = true;
  }, 1000);
  return {
    end: () => {
      clearInterval(timer);
      if (shown) process.stderr.write('\r\x1b[K');
    },
  };
}

/** A wrapped command that ended on its own (not by a signal to rezolus, nor the --duration cap). */
interface CommandEnd {
  readonly name: string;
  readonly exit: CommandExit;
  readonly afterMs: number;
}

/** `the command sh ended with exit code 7 after 0.0 s`, or `... was killed by SIGKILL ...` */
function commandEndText(c: CommandEnd): string {
  const how = c.exit.code !== null ? `ended with exit code ${c.exit.code}` : `was killed by ${c.exit.signal ?? 'a signal'}`;
  return `the command ${c.name} ${how} after ${(c.afterMs / 1000).toFixed(1)} s`;
}

/** The summary on a terminal, frames of a second agent left out, and why nothing was recorded, on stderr. */
async function tellTheEnd(summary: RecordSummary, p: Plan, nats: { url: string; how: string } | undefined, command: CommandEnd | undefined): Promise<void> {
  const { plural, skippedText, summaryLine } = await import('../record/summary.js');
  if (process.stderr.isTTY && summary.written) {
    // a terminal gets a summary; scripts get quiet and the file
    process.stderr.write(`${summaryLine(summary)}\n`);
  }
  const contested = summary.rowStats?.contested ?? 0;
  if (contested > 0) {
    process.stderr.write(
      `rezolus record: ${plural(contested, 'frame')} of a second agent run publishing for the same host while the first was live left out ` +
        '(two agents with one --host?); each host keeps the run heard first until it stops or goes quiet\n',
    );
  }
  if (summary.written) {
    // the agent went away before the end: the file has the rows up to then, and why is said
    if (summary.pollError !== undefined) process.stderr.write(`rezolus record: ${p.url ?? ''} stopped answering before the end (last poll: ${summary.pollError}); ${p.output} has the rows up to then\n`);
    return;
  }
  // a typo in a host name should not look like a recording, nor replace one
  const seen = summary.hostsInStream === undefined ? '' : `; the stream has ${summary.hostsInStream.length === 0 ? 'no hosts' : `hosts ${summary.hostsInStream.join(', ')}`}`;
  const defaulted = nats?.how === 'default' ? ' (no --nats, no REZOLUS_NATS_URL and no ./data/nats.url of `npm start` here, so the default)' : '';
  const source = nats !== undefined ? `arrived from ${nats.url}${defaulted}` : `came from ${p.url ?? ''}${summary.pollError === undefined ? '' : ` (last poll: ${summary.pollError})`}`;
  // frames that arrived but could not be used are not a typo in a host name: say what they were
  const anySkipped = totalSkipped(summary.skipped) > 0;
  const skipped = anySkipped ? `; ${skippedText(summary.skipped)}` : '';
  // an agent URL is one agent, whatever its host: no host names to mention
  const of = p.url === undefined ? ` of hosts "${p.hosts}"` : '';
  // frames that came but ended outside the window (a clock off, or a window longer ago than its frames)
  const o = summary.outsideWindow;
  const noFrames =
    o === undefined
      ? `no frames${of} ${source}${command === undefined ? '' : ' in that time'}${seen}${skipped}`
      : `none of the ${plural(o.before + o.after, 'frame')}${of} that ${source} ended within the window (${o.before} at or before its start, ${o.after} after its end: a host's clock off, or a window its hosts did not record?)${skipped}`;
  // a command shorter than the agents' interval: that is the news, the frames that did not come follow from it
  const why = command === undefined ? noFrames : `${commandEndText(command)}, before the first row was recorded (${noFrames})`;
  process.stderr.write(`rezolus record: nothing recorded, ${p.output} not written: ${why}\n`);
}

/**
 * Records until --duration, the stream's --until, a signal (130 / 143) or the
 * end of the wrapped command (its status; 124 when --duration cut it short;
 * 127 when it cannot start). Nothing recorded is 1, unless a signal or a
 * failed command set the status: a command that succeeded before the first
 * row was recorded is 1 too (no file).
 */
export async function recordMode(ctx: CliContext): Promise<number> {
  const p = await plan(ctx);
  const { command } = ctx;
  const log = createLogger(p.logLevel);
  // a signal during start-up ends the recording as soon as it runs
  const onStopSignal = catchStopSignals();
  // an agent URL is polled over HTTP: no NATS to look for, nor to name
  const nats = p.url === undefined ? await oneShotNats(ctx.flags, log) : undefined;
  const { runRecord } = await import('../record/main.js');
  const { exitStatus, startCommand } = await import('../record/command.js');
  const { plural } = await import('../record/summary.js');
  const started = Date.now();
  const running = await runRecord(
    {
      natsUrl: nats?.url,
      // no config file here: REZOLUS_NATS_USER, _PASSWORD, _NKEY_SEED_FILE, _TLS_CA, ... when set
      nats: readNatsSecurity(undefined, '(environment)'),
      hosts: p.hosts,
      intervalMs: p.intervalMs,
      // with a command, the duration caps the command (below)
      durationMs: command.length > 0 ? undefined : p.durationMs,
      output: p.output,
      replay: p.replay,
      url: p.url,
      durable: p.durable,
    },
    log,
  );
  let status = 0;
  let ended: CommandEnd | undefined;
  let stopping: Promise<unknown> = Promise.resolve();
  let wrapped;
  try {
    wrapped = command.length > 0 ? await startCommand(command) : undefined;
  } catch (error) {
    // as a shell says it: 127, and no recording of a command that never ran
    await running.abort();
    process.stderr.write(`rezolus record: cannot start ${command[0] ?? ''}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 127;
  }
  onStopSignal((signal) => {
    status = signal === 'SIGINT' ? 130 : 143;
    if (wrapped !== undefined) stopping = wrapped.terminate();
    running.stop();
  });
  if (wrapped !== undefined) {
    const { durationMs } = p;
    const commandStarted = Date.now();
    const cap = durationMs === undefined ? undefined : setTimeout(() => {
      status = 124;
      stopping = wrapped.terminate();
    }, durationMs);
    void wrapped.exited.then((e) => {
      if (cap !== undefined) clearTimeout(cap);
      if (status === 0) {
        status = exitStatus(e);
        ended = { name: command[0] ?? '', exit: e, afterMs: Date.now() - commandStarted };
      }
      running.stop();
    });
  }
  const progress = process.stderr.isTTY && wrapped === undefined ? progressLine(running, started, plural) : undefined;
  const summary = await running.done;
  await stopping;
  progress?.end();
  await tellTheEnd(summary, p, nats, summary.written ? undefined : ended);
  // a signal's or a failed command's status stays; nothing recorded is a failure otherwise
  if (!summary.written && status === 0) status = 1;
  return status;
}

export const RECORD: CliMode = {
  options: ['nats', 'log-level', 'host', 'hosts', 'interval', 'duration', 'output', 'since', 'until', 'stream', 'durable'],
  positionals: true,
  wrapsCommand: true,
  run: recordMode,
};
