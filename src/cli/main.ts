import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LevelWithSilent } from 'pino';
import { loadAgentConfig } from '../config/agent.js';
import { loadExporterConfig } from '../config/exporter.js';
import { loadUpConfig } from '../config/up.js';
import { loadHindsightConfig } from '../config/hindsight.js';
import { readNatsSecurity } from '../config/nats.js';
import { formatBytes, parseDuration, parseHosts, parseListen, parseNatsUrls } from '../config/units.js';
import { DEFAULT_STREAM, hostToken } from '../bus/subjects.js';
import { ConfigError, RezolusError } from '../errors.js';
import { createLogger, type Logger } from '../log/logger.js';
import { SAMPLER_NAMES } from '../samplers/registry.js';
import { VERSION } from '../version.js';
import { HELP, type Mode } from './help.js';

// src/cli and dist/cli are both two levels below the repository root.
const CONFIG_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config');

/** Where the one-shot modes look for NATS when no URL is given. */
const DEFAULT_NATS = 'nats://127.0.0.1:4222';

const OPTIONS = {
  help: { type: 'boolean', short: 'h' },
  config: { type: 'string' },
  nats: { type: 'string' },
  'log-level': { type: 'string' },
  host: { type: 'string' },
  interval: { type: 'string' },
  procfs: { type: 'string' },
  sysfs: { type: 'string' },
  listen: { type: 'string' },
  hosts: { type: 'string' },
  'data-dir': { type: 'string' },
  'nats-port': { type: 'string' },
  duration: { type: 'string' },
  output: { type: 'string', short: 'o' },
  since: { type: 'string' },
  until: { type: 'string' },
  stream: { type: 'string' },
  last: { type: 'string' },
  'hindsight-listen': { type: 'string' },
  'hosts-file': { type: 'string' },
  nkeys: { type: 'boolean' },
  'secrets-dir': { type: 'string' },
  durable: { type: 'string' },
} as const;

const ALLOWED: Record<Mode, readonly string[]> = {
  agent: ['help', 'config', 'nats', 'log-level', 'host', 'interval', 'procfs', 'sysfs'],
  exporter: ['help', 'config', 'nats', 'log-level', 'listen', 'hosts', 'interval'],
  up: ['help', 'config', 'nats', 'log-level', 'host', 'interval', 'listen', 'hosts', 'data-dir', 'nats-port', 'hindsight-listen'],
  record: ['help', 'nats', 'log-level', 'host', 'hosts', 'interval', 'duration', 'output', 'since', 'until', 'stream', 'durable'],
  hindsight: ['help', 'config', 'nats', 'log-level', 'host', 'hosts', 'interval', 'output', 'last', 'stream', 'listen'],
  'nats-auth': ['help', 'hosts', 'hosts-file', 'nkeys', 'secrets-dir', 'stream'],
};

type Flags = { [K in keyof typeof OPTIONS]?: (typeof OPTIONS)[K]['type'] extends 'boolean' ? boolean : string };

/** The config file for a mode: --config, else config/<mode>.toml shipped with rezolus, else built-in defaults. */
function configPath(mode: Mode, flags: Flags): string | undefined {
  if (flags.config !== undefined) return flags.config;
  const shipped = join(CONFIG_DIR, `${mode}.toml`);
  return existsSync(shipped) ? shipped : undefined;
}

function durationFlag(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = parseDuration(value);
  if (ms === undefined || ms < 10) throw new ConfigError(`--${flag} must be a duration of at least 10ms such as "100ms" or "1s", got "${value}"`);
  return ms;
}

function listenFlag(value: string | undefined): { host: string; port: number } | undefined {
  if (value === undefined) return undefined;
  const l = parseListen(value);
  if (l === undefined) throw new ConfigError(`--listen must be HOST:PORT such as "0.0.0.0:4242", got "${value}"`);
  return l;
}

function hostsFlag(value: string | undefined): string | undefined {
  if (value !== undefined && parseHosts(value) === undefined) {
    throw new ConfigError(`--hosts must be "*" (every host) or a comma-separated list of host names and globs (web-*), got "${value}"`);
  }
  return value;
}

function natsFlag(flags: Flags): string | undefined {
  const env = process.env.REZOLUS_NATS_URL;
  const [value, source] = flags.nats !== undefined ? [flags.nats, '--nats'] : [env, 'REZOLUS_NATS_URL'];
  if (value === undefined || (source === 'REZOLUS_NATS_URL' && value === '')) return undefined;
  if (parseNatsUrls(value) === undefined) {
    throw new ConfigError(`${source} must be a NATS URL such as "nats://127.0.0.1:4222" (several separated by commas), got "${value}"`);
  }
  return value;
}

/**
 * The NATS URL of a one-shot mode: --nats or REZOLUS_NATS_URL; else the
 * private server `rezolus up` (npm start) runs from this directory
 * (./data/nats.url), when it answers; else DEFAULT_NATS.
 */
async function oneShotNats(flags: Flags, log: Logger): Promise<{ url: string; how: 'given' | 'private' | 'default' }> {
  const given = natsFlag(flags);
  if (given !== undefined) return { url: given, how: 'given' };
  const { privateServerUrl } = await import('../up/nats-server.js');
  const local = await privateServerUrl();
  if (local === undefined) {
    log.info({ url: DEFAULT_NATS }, 'no NATS URL given and no ./data/nats.url here: using the default');
    return { url: DEFAULT_NATS, how: 'default' };
  }
  log.info({ url: local }, 'using the private NATS server of rezolus up (./data/nats.url)');
  return { url: local, how: 'private' };
}

function levelFlag(value: string | undefined): string | undefined {
  const levels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
  if (value !== undefined && !levels.includes(value)) throw new ConfigError(`--log-level must be one of ${levels.join(', ')}, got "${value}"`);
  return value;
}

/**
 * Runs until SIGINT/SIGTERM, then stops cleanly. A second signal more than a
 * second later exits at once; copies of the first one (a terminal Ctrl-C also
 * reaches npm and the start script, which forward it) are ignored.
 */
function untilSignal(stop: () => Promise<void>, log: Logger): void {
  let stoppingSince = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stoppingSince > 0) {
      if (Date.now() - stoppingSince > 1000) process.exit(130);
      return;
    }
    stoppingSince = Date.now();
    log.info({ signal }, 'stopping');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ error: String(error) }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

async function agentMode(flags: Flags): Promise<void> {
  const config = loadAgentConfig(configPath('agent', flags), SAMPLER_NAMES, {
    host: flags.host,
    natsUrl: natsFlag(flags),
    intervalMs: durationFlag(flags.interval, 'interval'),
    logLevel: levelFlag(flags['log-level']),
  });
  const cfg = { ...config, procfs: flags.procfs ?? config.procfs, sysfs: flags.sysfs ?? config.sysfs };
  const log = createLogger(cfg.logLevel as LevelWithSilent);
  // Each mode loads only its own code: the agent never pays for fastify (~12 MB RSS).
  const { runAgent } = await import('../agent/main.js');
  const running = await runAgent(cfg, log);
  untilSignal(() => running.stop(), log);
}

async function exporterMode(flags: Flags): Promise<void> {
  const config = loadExporterConfig(configPath('exporter', flags), {
    listen: listenFlag(flags.listen),
    hosts: hostsFlag(flags.hosts),
    intervalMs: durationFlag(flags.interval, 'interval'),
    natsUrl: natsFlag(flags),
    logLevel: levelFlag(flags['log-level']),
  });
  const log = createLogger(config.logLevel as LevelWithSilent);
  const { runExporter } = await import('../exporter/main.js');
  const running = await runExporter(config, log);
  untilSignal(() => running.stop(), log);
}

async function upMode(flags: Flags): Promise<void> {
  const upFile = configPath('up', flags);
  const up = loadUpConfig(upFile, upFile === undefined ? CONFIG_DIR : undefined);
  const intervalMs = durationFlag(flags.interval, 'interval');
  const logLevel = levelFlag(flags['log-level']) ?? up.logLevel;
  const agent = loadAgentConfig(up.agentConfig !== undefined && existsSync(up.agentConfig) ? up.agentConfig : undefined, SAMPLER_NAMES, {
    host: flags.host, intervalMs, logLevel,
  });
  const exporter = loadExporterConfig(up.exporterConfig !== undefined && existsSync(up.exporterConfig) ? up.exporterConfig : undefined, {
    listen: listenFlag(flags.listen), hosts: hostsFlag(flags.hosts) ?? agent.host, intervalMs, logLevel,
  });
  const hindsight = loadHindsightConfig(up.hindsightConfig !== undefined && existsSync(up.hindsightConfig) ? up.hindsightConfig : undefined, {
    listen: listenFlag(flags['hindsight-listen']), listenFlag: '--hindsight-listen', hosts: hostsFlag(flags.hosts) ?? agent.host, logLevel,
  });
  let forcePort: number | undefined;
  if (flags['nats-port'] !== undefined) {
    forcePort = Number(flags['nats-port']);
    if (!Number.isInteger(forcePort) || forcePort < 0 || forcePort > 65535) {
      throw new ConfigError(`--nats-port must be a port number (0 = any free port), got "${flags['nats-port']}"`);
    }
  }
  const log = createLogger(logLevel as LevelWithSilent);
  const { runUp } = await import('../up/main.js');
  const running = await runUp(
    {
      natsUrl: natsFlag(flags) ?? (up.natsUrl === '' ? undefined : up.natsUrl),
      forcePrivatePort: forcePort,
      privatePort: up.natsPort,
      natsServer: up.natsServer,
      dataDir: flags['data-dir'] ?? up.dataDir,
      agent,
      exporter,
      hindsight,
    },
    log,
  );
  const lines = [
    `rezolus-nats ${VERSION} is up`,
    `  NATS      ${running.natsUrl}${running.server ? ` (private nats-server, pid ${running.server.pid}, store ${running.server.storeDir})` : ''}`,
    `  stream    ${running.agent.streamName} (subjects rezolus.metrics.>, host ${running.agent.agent.host})`,
    `  exporter  ${running.exporter.url}`,
    `  hindsight ${running.hindsight.url}/dump (POST, or kill -HUP ${process.pid}) writes the last ${hindsight.durationMs / 60_000} min to ${hindsight.output}`,
    '  Ctrl-C stops everything started here.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  process.on('SIGHUP', () => {
    running.hindsight.dump('sighup').catch((error: unknown) => log.error({ error: String(error) }, 'dump failed'));
  });
  untilSignal(() => running.stop(), log);
}

/** A point in time: a duration ago (`10m`) or an RFC 3339 time; unix ms. */
function timeFlag(value: string, flag: string, nowMs: number): number {
  const ago = parseDuration(value);
  if (ago !== undefined) return nowMs - ago;
  const at = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at)) throw new ConfigError(`--${flag} must be a duration ago such as "10m" or an RFC 3339 time such as "2026-11-22T10:00:00Z", got "${value}"`);
  return at;
}

/** --since/--until as a replay window, or undefined for a live recording. */
function replayWindow(flags: Flags): { stream: string; sinceNs: bigint; untilNs: bigint } | undefined {
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
async function durableSpec(flags: Flags, url: string | undefined): Promise<import('../record/durable.js').DurableSpec> {
  const name = flags.durable as string;
  const { validDurableName } = await import('../bus/durable.js');
  if (!validDurableName(name)) throw new ConfigError(`--durable must be a consumer name of letters, digits, _ and - (at most 64), got "${name}"`);
  if (url !== undefined) throw new ConfigError('--durable records from the JetStream stream; it cannot be combined with an agent URL');
  if (command.length > 0) throw new ConfigError('--durable cannot wrap a command (after --): a restarted recorder cannot resume its lifetime');
  if (flags.since !== undefined && flags.duration !== undefined) throw new ConfigError('give --durable a window with --duration, or with --since/--until, not both');
  const window = flags.since !== undefined ? `since ${flags.since} until ${flags.until ?? 'now'}` : flags.duration !== undefined ? `duration ${flags.duration}` : 'until stopped';
  const w = flags.since === undefined ? undefined : replayWindow(flags);
  if (flags.since === undefined && flags.until !== undefined) throw new ConfigError('--until needs --since');
  return { name, stream: flags.stream ?? DEFAULT_STREAM, sinceNs: w?.sinceNs, untilNs: w?.untilNs, durationMs: durationFlag(flags.duration, 'duration'), window };
}

async function recordMode(flags: Flags): Promise<number> {
  if (flags.host !== undefined && flags.hosts !== undefined) throw new ConfigError('give --host or --hosts, not both');
  const hosts = hostsFlag(flags.hosts) ?? hostsFlag(flags.host) ?? hostToken(hostname());
  if (positionals.length > 2) throw new ConfigError(`expected at most an agent URL and an output file, got ${positionals.length} arguments`);
  const url = positionals[0];
  if (url !== undefined && !/^https?:\/\/[^/]/.test(url)) throw new ConfigError(`the agent URL must be http://HOST:PORT such as http://localhost:4241, got "${url}"`);
  if (url !== undefined && (flags.since !== undefined || flags.host !== undefined || flags.hosts !== undefined)) {
    throw new ConfigError('an agent URL records that agent live; it cannot be combined with --since, --host or --hosts');
  }
  const output = flags.output ?? positionals[1] ?? 'rezolus.parquet';
  if (!output.endsWith('.parquet')) throw new ConfigError(`-o must name a .parquet file, got "${output}"`);
  checkOutputDir(output);
  const durable = flags.durable === undefined ? undefined : await durableSpec(flags, url);
  const replay = durable === undefined ? replayWindow(flags) : undefined;
  if (replay !== undefined && command.length > 0) throw new ConfigError('a command (after --) records its own lifetime live; it cannot be combined with --since');
  const durationMs = durationFlag(flags.duration, 'duration');
  // on a terminal the progress line says what info logs would
  const logLevel = levelFlag(flags['log-level']) ?? (process.stderr.isTTY ? 'warn' : 'info');
  const log = createLogger(logLevel as LevelWithSilent);
  // a signal during start-up ends the recording as soon as it runs
  let signalled: NodeJS.Signals | undefined;
  let onSignal = (signal: NodeJS.Signals): void => void (signalled = signal);
  const forward = (signal: NodeJS.Signals): void => onSignal(signal);
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  const intervalMs = durationFlag(flags.interval, 'interval') ?? 1000;
  const nats = await oneShotNats(flags, log);
  const { runRecord } = await import('../record/main.js');
  const { exitStatus, startCommand } = await import('../record/command.js');
  const { plural, skippedText, summaryLine } = await import('../record/summary.js');
  const { totalSkipped } = await import('../bus/subscribe.js');
  const started = Date.now();
  const running = await runRecord(
    {
      natsUrl: nats.url,
      // no config file here: REZOLUS_NATS_USER, _PASSWORD, _NKEY_SEED_FILE, _TLS_CA, ... when set
      nats: readNatsSecurity(undefined, '(environment)'),
      hosts,
      intervalMs,
      // with a command, the duration caps the command (below)
      durationMs: command.length > 0 ? undefined : durationMs,
      output,
      replay,
      url,
      durable,
    },
    log,
  );
  let status = 0;
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
  onSignal = (signal: NodeJS.Signals): void => {
    status = signal === 'SIGINT' ? 130 : 143;
    if (wrapped !== undefined) stopping = wrapped.terminate();
    running.stop();
  };
  if (signalled !== undefined) onSignal(signalled);
  if (wrapped !== undefined) {
    const cap = durationMs === undefined ? undefined : setTimeout(() => {
      status = 124;
      stopping = wrapped.terminate();
    }, durationMs);
    void wrapped.exited.then((e) => {
      if (cap !== undefined) clearTimeout(cap);
      if (status === 0) status = exitStatus(e);
      running.stop();
    });
  }
  let shown = false;
  const progress = process.stderr.isTTY && wrapped === undefined
    ? setInterval(() => {
      const p = running.progress();
      const written = p.bytes > 4 ? `, ${formatBytes(p.bytes)} written` : '';
      process.stderr.write(`\r\x1b[K  ${((Date.now() - started) / 1000).toFixed(0)} s, ${plural(p.frames, 'frame')}, ${plural(p.rows, 'row')}${written}`);
      shown = true;
    }, 1000)
    : undefined;
  const summary = await running.done;
  await stopping;
  if (progress !== undefined) clearInterval(progress);
  if (shown) process.stderr.write('\r\x1b[K');
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
  if (!summary.written) {
    // a typo in a host name should not look like a recording, nor replace one; a signal's or a command's status stays
    const seen = summary.hostsInStream === undefined ? '' : `; the stream has ${summary.hostsInStream.length === 0 ? 'no hosts' : `hosts ${summary.hostsInStream.join(', ')}`}`;
    const defaulted = nats.how === 'default' ? ' (no --nats, no REZOLUS_NATS_URL and no ./data/nats.url of `npm start` here, so the default)' : '';
    const source = url === undefined ? `arrived from ${nats.url}${defaulted}` : `came from ${url}${summary.pollError === undefined ? '' : ` (last poll: ${summary.pollError})`}`;
    // frames that arrived but could not be used are not a typo in a host name: say what they were
    const skipped = totalSkipped(summary.skipped) === 0 ? '' : `; ${skippedText(summary.skipped)}`;
    process.stderr.write(`rezolus record: nothing recorded, ${output} not written: no frames of hosts "${hosts}" ${source}${seen}${skipped}\n`);
    if (status === 0 && wrapped === undefined) status = 1;
  }
  return status;
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

/**
 * `rezolus hindsight`: the service (dump on SIGHUP, POST /dump or a NATS
 * request); `rezolus hindsight snapshot --last 10m …`: the last window once.
 */
async function hindsightMode(flags: Flags): Promise<number | void> {
  if (subcommand === 'snapshot') {
    if (flags.listen !== undefined || flags.config !== undefined) throw new ConfigError('snapshot takes no --listen or --config');
    const last = flags.last ?? '15m';
    if (parseDuration(last) === undefined) throw new ConfigError(`--last must be a duration such as "10m", got "${last}"`);
    return recordMode({ ...flags, last: undefined, since: last, output: flags.output ?? 'hindsight.parquet' });
  }
  if (subcommand !== undefined) throw new ConfigError(`unknown hindsight subcommand "${subcommand}" (the service runs without one; "snapshot" writes once)`);
  if (flags.last !== undefined || flags.stream !== undefined || flags.host !== undefined) {
    throw new ConfigError('the service takes its window from hindsight.toml ([general] duration, stream, hosts); --last is for "snapshot"');
  }
  const config = loadHindsightConfig(configPath('hindsight', flags), {
    hosts: hostsFlag(flags.hosts),
    output: flags.output,
    intervalMs: durationFlag(flags.interval, 'interval'),
    listen: listenFlag(flags.listen),
    natsUrl: natsFlag(flags),
    logLevel: levelFlag(flags['log-level']),
  });
  if (!config.output.endsWith('.parquet')) throw new ConfigError(`output must name a .parquet file, got "${config.output}"`);
  const log = createLogger(config.logLevel as LevelWithSilent);
  const { runHindsight } = await import('../hindsight/main.js');
  const running = await runHindsight(config, log);
  process.on('SIGHUP', () => {
    running.dump('sighup').catch((error: unknown) => log.error({ error: String(error) }, 'dump failed'));
  });
  untilSignal(() => running.stop(), log);
}

/** `rezolus nats-auth`: the server-side users and permissions for a list of hosts, on stdout. */
async function natsAuthMode(flags: Flags): Promise<number> {
  const { runNatsAuth } = await import('../security/nats-auth-command.js');
  const out = runNatsAuth({ hosts: flags.hosts, hostsFile: flags['hosts-file'], nkeys: flags.nkeys === true, secretsDir: flags['secrets-dir'], stream: flags.stream ?? DEFAULT_STREAM });
  process.stdout.write(out.config);
  process.stderr.write(`${out.summary}\n`);
  return 0;
}

const MODES: Record<Mode, (flags: Flags) => Promise<number | void>> = {
  agent: agentMode, exporter: exporterMode, up: upMode, record: recordMode, hindsight: hindsightMode, 'nats-auth': natsAuthMode,
};

/** the command `rezolus record … -- cmd args` wraps */
let command: readonly string[] = [];
/** `rezolus hindsight <subcommand>` */
let subcommand: string | undefined;
/** `rezolus record URL OUTPUT` (the seeds' form) */
let positionals: readonly string[] = [];

/**
 * `--interval -1s` as `--interval=-1s`: parseArgs takes a value that starts
 * with a dash for another option and says "ambiguous"; joined, the value
 * reaches our own check and its message.
 */
function joinNegativeValues(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    const next = args[i + 1];
    const name = a.startsWith('--') && !a.includes('=') ? a.slice(2) : undefined;
    const option = name !== undefined && Object.hasOwn(OPTIONS, name) ? OPTIONS[name as keyof typeof OPTIONS] : undefined;
    if (option?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [mode, ...rest] = argv;
  if (mode === undefined || mode === '--help' || mode === '-h' || mode === 'help') {
    process.stdout.write(HELP.main);
    return mode === undefined ? 2 : 0;
  }
  if (mode === '--version') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (!(mode in MODES)) {
    process.stderr.write(`rezolus: unknown mode "${mode}"\n\n${HELP.main}`);
    return 2;
  }
  const m = mode as Mode;
  // record wraps a command given after `--`
  const dashes = m === 'record' ? rest.indexOf('--') : -1;
  let own = dashes === -1 ? rest : rest.slice(0, dashes);
  subcommand = undefined;
  if (m === 'hindsight' && own[0] !== undefined && !own[0].startsWith('-')) [subcommand, ...own] = own;
  command = dashes === -1 ? [] : rest.slice(dashes + 1);
  let flags: Flags;
  try {
    if (dashes !== -1 && command.length === 0) throw new Error('no command after --');
    const parsed = parseArgs({ args: joinNegativeValues(own), options: OPTIONS, strict: true, allowPositionals: m === 'record' });
    flags = parsed.values as Flags;
    positionals = parsed.positionals;
    const bad = Object.keys(flags).filter((k) => !ALLOWED[m].includes(k));
    if (bad.length > 0) throw new Error(`option --${bad[0]} is not known to "rezolus ${m}"`);
  } catch (error) {
    process.stderr.write(`rezolus ${m}: ${(error as Error).message} (rezolus ${m} --help lists the options)\n`);
    return 2;
  }
  if (flags.help === true) {
    process.stdout.write(HELP[m]);
    return 0;
  }
  try {
    const code = await MODES[m](flags);
    return code ?? -1; // services keep running until a signal
  } catch (error) {
    if (error instanceof RezolusError) {
      process.stderr.write(`rezolus ${m}: ${error.message}\n`);
      return error instanceof ConfigError ? 2 : 1;
    }
    throw error;
  }
}
