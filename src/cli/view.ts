/**
 * `rezolus view`: the web viewer. No argument: the live bus (every host,
 * the stream's window there from the first look); FILE.parquet: a
 * recording; two files (or name=path pairs): an A/B comparison; an agent
 * URL: that agent's HTTP. Listens on 127.0.0.1 (a free port) unless
 * --listen; elsewhere only with REZOLUS_HTTP_TOKEN.
 */
import { existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { LevelWithSilent } from 'pino';
import { DEFAULT_STREAM } from '../bus/subjects.js';
import { HINDSIGHT_SPEC } from '../config/hindsight.js';
import { httpToken } from '../config/http-token.js';
import { readNatsSecurity } from '../config/nats.js';
import type { KeySpec } from '../config/schema.js';
import { ConfigError, RezolusError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { temporariesOf } from '../viewer/file/source.js';
import type { ViewConfig, ViewSource } from '../viewer/main.js';
import { durationFlag, hostsFlag, keySpec, levelFlag, listenFlag, oneShotNats } from './flags.js';
import type { CliContext, CliMode } from './mode.js';
import { untilSignal } from './signals.js';

const INTERVAL = keySpec(HINDSIGHT_SPEC.general, 'interval');
const HOSTS = keySpec(HINDSIGHT_SPEC.general, 'hosts');
const LISTEN: KeySpec = { type: 'listen', default: '127.0.0.1:0', doc: 'HOST:PORT of the viewer (a free loopback port by default).' };
const WINDOW: KeySpec = { type: 'duration', default: '', minMs: 10_000, doc: "How far back the live viewer reaches (default: the stream's max_age)." };

/** `name=path` or `path`; the names default to the file name (one file) or A, B (two). */
function files(positionals: readonly string[]): { name: string; path: string }[] {
  const out = positionals.map((p, i) => {
    const eq = p.indexOf('=');
    const named = eq > 0 && !existsSync(p);
    const path = named ? p.slice(eq + 1) : p;
    // a name made from the file name keeps what a source name may hold ("my run (1).parquet" is my_run_1_.parquet)
    const name = named ? p.slice(0, eq) : positionals.length === 1 ? basename(path).replace(/[^A-Za-z0-9_.-]+/g, '_') : String.fromCharCode(65 + i);
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw new ConfigError(`a source name may hold letters, digits, "_", "-" and "."; got "${name}"`);
    if (!existsSync(path)) {
      // a recorder writes <path>.tmp-<pid>-… and renames it when the recording is whole
      const tmp = temporariesOf(path)[0];
      throw new ConfigError(`no such file: ${path}${tmp === undefined ? '' : `; a recording is still being written to ${tmp}: open ${path} when the recorder has finished`}`);
    }
    if (!statSync(path).isFile()) throw new ConfigError(`not a file: ${path}`);
    return { name, path };
  });
  if (new Set(out.map((f) => f.name)).size !== out.length) throw new ConfigError('two sources have the same name: give them names, as A=old.parquet B=new.parquet');
  return out;
}

async function viewMode({ flags, positionals }: CliContext): Promise<undefined> {
  const logLevel = levelFlag(flags['log-level']) ?? 'info';
  const log = createLogger(logLevel as LevelWithSilent);
  const listen = listenFlag(LISTEN, flags.listen, '--listen') ?? { host: '127.0.0.1', port: 0 };
  const token = httpToken(listen, '', 'rezolus view', process.env, '--listen');
  const intervalMs = durationFlag(INTERVAL, flags.interval, '--interval') ?? 1000;
  const windowMs = durationFlag(WINDOW, flags.window, '--window');
  const urls = positionals.filter((p) => /^https?:\/\//.test(p));
  if (urls.length > 0 && positionals.length > 1) throw new ConfigError('give either one agent URL or Parquet files, not both');
  if (positionals.length > 2) throw new ConfigError(`at most two files can be compared, got ${positionals.length}`);
  const bus = positionals.length === 0;
  if (!bus && (flags.nats !== undefined || flags.hosts !== undefined || flags.stream !== undefined || flags['save-dir'] !== undefined)) {
    throw new ConfigError('--nats, --hosts, --stream and --save-dir are for the live bus (rezolus view with no file or URL)');
  }
  let source: ViewSource;
  if (urls[0] !== undefined) source = { kind: 'agent', url: urls[0], intervalMs };
  else if (!bus) source = { kind: 'files', files: files(positionals) };
  else {
    const nats = await oneShotNats(flags, log);
    source = {
      kind: 'live',
      natsUrl: nats.url,
      nats: readNatsSecurity(undefined, '(environment)'),
      stream: flags.stream ?? DEFAULT_STREAM,
      hosts: hostsFlag(HOSTS, flags.hosts, '--hosts') ?? '*',
    };
  }
  const config: ViewConfig = { source, listen, token: token === '' ? undefined : token, windowMs, saveDir: flags['save-dir'] ?? '.', saveIntervalMs: intervalMs };
  const { runViewer } = await import('../viewer/main.js');
  let running: Awaited<ReturnType<typeof runViewer>>;
  try {
    running = await runViewer(config, log);
  } catch (error) {
    // a file that cannot be shown is a bad argument
    if (error instanceof RezolusError && error.code === 'VIEWER_FILE') throw new ConfigError(error.message, { cause: error });
    throw error;
  }
  const open = config.token === undefined ? running.url : `${running.url}login?token=<REZOLUS_HTTP_TOKEN>`;
  log.info({ url: open }, 'viewer ready');
  process.stderr.write(`rezolus view: open ${open}\n`);
  untilSignal(() => running.stop(), log);
  return undefined;
}

export const VIEW: CliMode = {
  options: ['nats', 'log-level', 'listen', 'hosts', 'stream', 'interval', 'window', 'save-dir'],
  positionals: true,
  run: viewMode,
};
