/**
 * `rezolus status`: the fleet at a glance from the bus (src/status/): one
 * row per host, the stream's window, the durable consumers and their lag.
 * Exit 0 when every selected host is fresh and no sampler failed, 1 when
 * one is silent or stopped, a sampler failed or no host was found (and when
 * NATS or the stream is missing), 2 on bad usage.
 */
import { DEFAULT_STREAM } from '../bus/subjects.js';
import { HINDSIGHT_SPEC } from '../config/hindsight.js';
import { readNatsSecurity } from '../config/nats.js';
import { parseDuration } from '../config/units.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { hostsFlag, keySpec, levelFlag, oneShotNats } from './flags.js';
import type { CliContext, CliMode } from './mode.js';

const HOSTS = keySpec(HINDSIGHT_SPEC.general, 'hosts');

/** --silent-after: a duration of at least 1 s. */
export function silentAfterFlag(value: string | undefined, fallbackMs: number): number {
  if (value === undefined) return fallbackMs;
  const ms = parseDuration(value);
  if (ms === undefined || ms < 1000) throw new ConfigError(`--silent-after must be a duration of at least 1s such as 30s or 2m, got "${value}"`);
  return ms;
}

async function statusMode(ctx: CliContext): Promise<number> {
  const { flags } = ctx;
  if (ctx.positionals.length > 0) throw new ConfigError(`unexpected argument "${ctx.positionals[0]}" (select hosts with --hosts)`);
  const { DEFAULT_SILENT_AFTER_MS, assessStatus, formatStatus, gatherStatus } = await import('../status/index.js');
  const silentAfterMs = silentAfterFlag(flags['silent-after'], DEFAULT_SILENT_AFTER_MS);
  const hosts = hostsFlag(HOSTS, flags.hosts, '--hosts') ?? '*';
  const stream = flags.stream ?? DEFAULT_STREAM;
  const security = readNatsSecurity(undefined, '(environment)');
  const log = createLogger(levelFlag(flags['log-level']) ?? 'warn');
  const { url, how } = await oneShotNats(flags, log);
  // the default URL was taken for want of another: a missing server or stream is most likely that
  const snapshot = await gatherStatus({ url, security, stream, hosts, log, fellBack: how === 'default' });
  const report = assessStatus(snapshot, { silentAfterMs, hosts });
  process.stdout.write(flags.json === true ? `${JSON.stringify(report, null, 2)}\n` : formatStatus(report));
  return report.ok ? 0 : 1;
}

export const STATUS: CliMode = {
  options: ['nats', 'log-level', 'hosts', 'stream', 'json', 'silent-after'],
  run: statusMode,
};
