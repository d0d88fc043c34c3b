/**
 * `rezolus alert`: the rule evaluator, until a signal.
 * `rezolus alert check FILE...`: validates rule files, as `promtool check
 * rules` does (exit 0 and one line per file, or exit 2 naming the file, the
 * rule and the key).
 */
import type { LevelWithSilent } from 'pino';
import { ALERTS_SPEC, loadAlertsConfig, type AlertsConfig } from '../config/alerts.js';
import { natsSection } from '../config/schema.js';
import { readNatsSecurity } from '../config/nats.js';
import { formatDuration } from '../config/units.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { metricCatalog } from '../samplers/catalog.js';
import { eventLine } from '../alert/event-lines.js';
import { configPath, hostsFlag, keySpec, levelFlag, natsFlag, oneShotNats } from './flags.js';
import { timeFlag } from './record.js';
import type { CliContext, CliMode } from './mode.js';
import { untilSignal } from './signals.js';

/** One line per rule: what it watches and when it fires. */
export function describeRules(config: AlertsConfig): string[] {
  return config.rules.map((r) => {
    const clear = r.clearText === undefined ? '' : `, clears past ${r.clearText}`;
    const hold = r.forMs > 0 ? ` for ${formatDuration(r.forMs)}` : '';
    const what = r.reduce.kind === 'age' ? `no ${r.metric} frame for` : `${r.reduceText}(${r.metric}${Object.keys(r.matchText).length > 0 ? JSON.stringify(r.matchText) : ''}) over ${formatDuration(r.windowMs)} ${r.op}`;
    return `  ${r.name}: ${what} ${r.thresholdText}${clear}${hold} (${r.severity}, ${r.group === 'each' ? 'per series' : 'summed'})`;
  });
}

function check(ctx: CliContext): number {
  const files = ctx.positionals;
  if (files.length === 0) throw new ConfigError('usage: rezolus alert check FILE... (a rules file such as config/alerts.toml)');
  const catalog = metricCatalog();
  for (const file of files) {
    const config = loadAlertsConfig(file, catalog);
    process.stdout.write(`${file}: ${config.rules.length} rule${config.rules.length === 1 ? '' : 's'} found, SUCCESS\n${describeRules(config).join('\n')}\n`);
  }
  return 0;
}

/**
 * `alert events`: the events of the stream from --since (default 1h ago),
 * one line each, then new ones as they come until Ctrl-C (or, with
 * --until, up to then).
 */
async function events(ctx: CliContext): Promise<number> {
  const { flags } = ctx;
  if (ctx.positionals.length > 0) throw new ConfigError(`unexpected argument "${ctx.positionals[0]}" (alert events takes --since, --until, --hosts, --nats)`);
  const now = Date.now();
  const since = timeFlag(flags.since ?? '1h', 'since', now);
  const until = flags.until === undefined ? undefined : timeFlag(flags.until, 'until', now);
  const log = createLogger(levelFlag(flags['log-level']) ?? 'warn');
  const { url } = await oneShotNats(flags, log);
  const { followAlertEvents } = await import('../alert/follow.js');
  const pick = flags.hosts === undefined ? undefined : hostsFlag(keySpec(ALERTS_SPEC.general, 'hosts'), flags.hosts, '--hosts');
  let stop: (() => void) | undefined;
  if (until === undefined) untilSignal(async () => stop?.(), log);
  const n = await followAlertEvents(
    { url, since, until, hosts: pick, security: readNatsSecurity(undefined, '(environment)') },
    (e) => process.stdout.write(`${eventLine(e)}\n`),
    (s) => (stop = s),
  );
  if (n === 0) process.stderr.write(`no alert events since ${new Date(since).toISOString()}\n`);
  return 0;
}

async function alertMode(ctx: CliContext): Promise<number | undefined> {
  const { flags, subcommand } = ctx;
  if (subcommand === 'check') return check(ctx);
  if (subcommand === 'events') return events(ctx);
  if (subcommand !== undefined) throw new ConfigError(`unknown alert subcommand "${subcommand}" (the evaluator runs without one; "check FILE" validates rules; "events" prints them)`);
  if (flags.since !== undefined || flags.until !== undefined) throw new ConfigError('--since and --until are for "rezolus alert events"');
  if (ctx.positionals.length > 0) throw new ConfigError(`unexpected argument "${ctx.positionals[0]}" (rules come from --config FILE)`);
  const given = natsFlag(flags);
  const overrides = {
    hosts: hostsFlag(keySpec(ALERTS_SPEC.general, 'hosts'), flags.hosts, '--hosts'),
    stream: flags.stream,
    natsUrl: given,
    logLevel: levelFlag(flags['log-level']),
    captureDir: flags.output,
  };
  let config = loadAlertsConfig(configPath('alert', flags, 'alerts.toml'), metricCatalog(), overrides);
  if (config.rules.length === 0) throw new ConfigError(`${config.file} has no [[rule]]: nothing to evaluate`);
  const log = createLogger(config.logLevel as LevelWithSilent);
  // no URL given and none in the file: the private server `rezolus up` runs from this directory, as record does
  const defaultUrl = keySpec(natsSection, 'url').default;
  if (given === undefined && config.natsUrl === defaultUrl) {
    const { privateServerUrl } = await import('../up/nats-server.js');
    const local = await privateServerUrl();
    if (local !== undefined) {
      log.info({ url: local }, 'using the private NATS server of rezolus up (./data/nats.url)');
      config = { ...config, natsUrl: local };
    }
  }
  const { runAlert } = await import('../alert/main.js');
  const running = await runAlert(config, log);
  untilSignal(async () => {
    await running.stop();
    // what it took in over its run: frames fed to the rules and messages left out (test/bench/fleet.ts audits these)
    log.info(running.stats(), 'alert evaluator stopped');
  }, log);
  return undefined;
}

export const ALERT: CliMode = {
  options: ['config', 'nats', 'log-level', 'hosts', 'stream', 'output', 'since', 'until'],
  positionals: true,
  subcommands: true,
  run: alertMode,
};
