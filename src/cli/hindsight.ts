/**
 * `rezolus hindsight`: the service (dump on SIGHUP, POST /dump or a NATS
 * request); `rezolus hindsight snapshot --last 10m …`: the last window once,
 * which is `rezolus record --since 10m` with hindsight's defaults.
 */
import type { LevelWithSilent } from 'pino';
import { HINDSIGHT_SPEC, loadHindsightConfig } from '../config/hindsight.js';
import { parseDuration } from '../config/units.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { configPath, durationFlag, hostsFlag, keySpec, levelFlag, listenFlag, natsFlag, serviceNats } from './flags.js';
import type { CliContext, CliMode } from './mode.js';
import { recordMode } from './record.js';
import { dumpOnHangup, untilSignal } from './signals.js';

const INTERVAL = keySpec(HINDSIGHT_SPEC.general, 'interval');
const HOSTS = keySpec(HINDSIGHT_SPEC.general, 'hosts');
const LISTEN = keySpec(HINDSIGHT_SPEC.http, 'listen');

/** `hindsight snapshot`: record mode over the last --last (default 15m), into hindsight.parquet by default. */
function snapshot(ctx: CliContext): Promise<number> {
  const { flags } = ctx;
  if (flags.listen !== undefined || flags.config !== undefined) throw new ConfigError('snapshot takes no --listen or --config');
  const last = flags.last ?? '15m';
  if (parseDuration(last) === undefined) throw new ConfigError(`--last must be a duration such as "10m", got "${last}"`);
  return recordMode({ ...ctx, flags: { ...flags, last: undefined, since: last, output: flags.output ?? 'hindsight.parquet' } });
}

async function hindsightMode(ctx: CliContext): Promise<number | undefined> {
  const { flags, subcommand } = ctx;
  if (subcommand === 'snapshot') return snapshot(ctx);
  if (subcommand !== undefined) throw new ConfigError(`unknown hindsight subcommand "${subcommand}" (the service runs without one; "snapshot" writes once)`);
  if (flags.last !== undefined || flags.stream !== undefined || flags.host !== undefined) {
    throw new ConfigError('the service takes its window from hindsight.toml ([general] duration, stream, hosts); --last is for "snapshot"');
  }
  const config = loadHindsightConfig(configPath('hindsight', flags), {
    hosts: hostsFlag(HOSTS, flags.hosts, '--hosts'),
    output: flags.output,
    intervalMs: durationFlag(INTERVAL, flags.interval, '--interval'),
    listen: listenFlag(LISTEN, flags.listen, '--listen'),
    natsUrl: natsFlag(flags),
    logLevel: levelFlag(flags['log-level']),
  });
  if (!config.output.endsWith('.parquet')) throw new ConfigError(`output must name a .parquet file, got "${config.output}"`);
  const log = createLogger(config.logLevel as LevelWithSilent);
  const { runHindsight } = await import('../hindsight/main.js');
  const running = await runHindsight({ ...config, natsUrl: await serviceNats(flags, config.natsUrl, log) }, log);
  dumpOnHangup(() => running.dump('sighup'), log);
  untilSignal(() => running.stop(), log);
  return undefined;
}

export const HINDSIGHT: CliMode = {
  options: ['config', 'nats', 'log-level', 'host', 'hosts', 'interval', 'output', 'last', 'stream', 'listen'],
  subcommands: true,
  run: hindsightMode,
};
