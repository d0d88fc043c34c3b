import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { LevelWithSilent } from 'pino';
import { AGENT_SPEC, type AgentConfig, loadAgentConfig } from '../config/agent.js';
import { formatDuration } from '../config/units.js';
import { EXPORTER_SPEC, loadExporterConfig } from '../config/exporter.js';
import { HINDSIGHT_SPEC, loadHindsightConfig } from '../config/hindsight.js';
import { loadAlertsConfig } from '../config/alerts.js';
import { metricCatalog } from '../samplers/catalog.js';
import { loadUpConfig } from '../config/up.js';
import { httpToken } from '../config/http-token.js';
import type { KeySpec } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { unwritableReason } from '../files/writable.js';
import { createLogger } from '../log/logger.js';
import { SAMPLERS } from '../samplers/registry.js';
import { VERSION } from '../version.js';
import { CONFIG_DIR, configPath, durationFlag, hostsFlag, keySpec, levelFlag, listenFlag, natsFlag } from './flags.js';
import type { CliContext, CliMode } from './mode.js';
import { dumpOnHangup, untilSignal } from './signals.js';

/** --interval goes to every sampler of the agent, --scrape-interval to the exporter's window */
const INTERVAL = keySpec(AGENT_SPEC.defaults, 'interval');
const SCRAPE_INTERVAL = keySpec(EXPORTER_SPEC.general, 'interval');
const LISTEN = keySpec(EXPORTER_SPEC.general, 'listen');
const HOSTS = keySpec(EXPORTER_SPEC.general, 'hosts');
const HINDSIGHT_LISTEN = keySpec(HINDSIGHT_SPEC.http, 'listen');
const VIEW_LISTEN: KeySpec = { type: 'listen', default: '127.0.0.1:0', doc: 'HOST:PORT of the viewer up serves (a free loopback port by default; "off" for none).' };

/**
 * The samplers whose counters the exporter's burst view covers, at up.toml's
 * oversample_interval (none when it is "").
 */
function burstSamplers(metrics: readonly string[], intervalMs: number | undefined): { names: string[]; intervals: Record<string, number> | undefined } {
  if (intervalMs === undefined) return { names: [], intervals: undefined };
  const wanted = new Set(metrics);
  const names = SAMPLERS.filter((s) => s.metrics.some((m) => wanted.has(m.name))).map((s) => s.name);
  return { names, intervals: Object.fromEntries(names.map((n) => [n, intervalMs])) };
}

/** The banner's line on the burst view: which samplers feed it, how fast, and whether the scrape interval leaves it room. */
function burstLine(agent: AgentConfig, scrapeMs: number, names: readonly string[]): string[] {
  const on = names.filter((n) => agent.samplers[n]?.enabled === true);
  if (on.length === 0) return [];
  const fastest = Math.min(...on.map((n) => agent.samplers[n]?.intervalMs ?? Number.POSITIVE_INFINITY));
  if (fastest * 3 > scrapeMs) {
    return [`  bursts    none: ${on.join(', ')} sample every ${formatDuration(fastest)}, fewer than 3 samples per ${formatDuration(scrapeMs)} scrape (sample faster with --interval, or scrape slower with --scrape-interval)`];
  }
  return [`  bursts    ${on.join(', ')} sample every ${formatDuration(fastest)}: <family>_rate{percentile="1"} on /metrics is the fastest ${formatDuration(fastest)} within each ${formatDuration(scrapeMs)} scrape`];
}

/** A config file of up.toml's that exists, else the built-in defaults. */
const existing = (path: string | undefined): string | undefined => (path !== undefined && existsSync(path) ? path : undefined);

/**
 * `rezolus up`: a private nats-server (unless given a URL), an agent, an
 * exporter and a hindsight service in one process, until a signal.
 */
async function upMode({ flags }: CliContext): Promise<undefined> {
  const upFile = configPath('up', flags);
  const up = loadUpConfig(upFile, upFile === undefined ? CONFIG_DIR : undefined);
  const intervalMs = durationFlag(INTERVAL, flags.interval, '--interval');
  const scrapeMs = durationFlag(SCRAPE_INTERVAL, flags['scrape-interval'], '--scrape-interval');
  const logLevel = levelFlag(flags['log-level']) ?? up.logLevel;
  const listen = listenFlag(LISTEN, flags.listen, '--listen');
  const hosts = hostsFlag(HOSTS, flags.hosts, '--hosts');
  const exporterBase = loadExporterConfig(existing(up.exporterConfig), { listen, intervalMs: scrapeMs, logLevel });
  const burst = burstSamplers(exporterBase.oversampleMetrics, up.oversampleIntervalMs);
  const agent = loadAgentConfig(existing(up.agentConfig), SAMPLERS, { host: flags.host, intervalMs, samplerIntervalMs: burst.intervals, logLevel });
  // up's exporter shows this host unless --hosts says otherwise (hosts in exporter.toml is for a fleet's exporter)
  const exporter = { ...exporterBase, hosts: hosts ?? agent.host };
  const hindsight = loadHindsightConfig(existing(up.hindsightConfig), {
    listen: listenFlag(HINDSIGHT_LISTEN, flags['hindsight-listen'], '--hindsight-listen'), listenFlag: '--hindsight-listen', hosts: hosts ?? agent.host, logLevel,
  });
  // refused before anything starts (the hindsight service checks it too, but after NATS and the agent)
  const unwritable = unwritableReason(dirname(resolve(hindsight.output)), false);
  if (unwritable !== undefined) throw new ConfigError(`hindsight output ${hindsight.output}: ${unwritable} (set [general] output in ${hindsight.file})`);
  const alertsFile = flags.alerts === 'off' ? '' : (flags.alerts ?? up.alertsConfig);
  if (flags.alerts !== undefined && flags.alerts !== 'off' && !existsSync(flags.alerts)) throw new ConfigError(`--alerts ${flags.alerts}: no such file (a rules file such as config/alerts.toml, or "off")`);
  const alertConfig = alertsFile === '' ? undefined : loadAlertsConfig(existing(alertsFile), metricCatalog(), { logLevel });
  const alert = alertConfig === undefined || alertConfig.rules.length === 0 ? undefined : alertConfig;
  const viewListen = flags['view-listen'] === 'off' ? { host: '127.0.0.1', port: 0 } : (listenFlag(VIEW_LISTEN, flags['view-listen'], '--view-listen') ?? { host: '127.0.0.1', port: 0 });
  const viewToken = httpToken(viewListen, '', 'rezolus up viewer', process.env, '--view-listen');
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
      viewer: flags['view-listen'] === 'off' ? undefined : { listen: viewListen, token: viewToken === '' ? undefined : viewToken },
      alert,
    },
    log,
  );
  const exporterPort = new URL(running.exporter.url).port;
  const lines = [
    `rezolus-nats ${VERSION} is up`,
    `  NATS      ${running.natsUrl}${running.server ? ` (private nats-server, pid ${running.server.pid}, store ${running.server.storeDir})` : ''}`,
    `  stream    ${running.agent.streamName} (subjects rezolus.metrics.>, host ${running.agent.agent.host})`,
    `  exporter  ${running.exporter.url}${exporter.listen.host === '0.0.0.0' || exporter.listen.host === '::' ? ` (on every interface, ${exporter.listen.host}:${exporterPort}: other machines can scrape it; --listen 127.0.0.1:${exporterPort} keeps it local)` : ''}`,
    ...(running.viewer === undefined ? [] : [`  viewer    ${running.viewer.url}${viewToken === '' ? '' : 'login?token=<REZOLUS_HTTP_TOKEN>'} (the fleet live, each host's last ${Math.round(hindsight.durationMs / 60_000)} min)`]),
    `  hindsight ${running.hindsight.url}/dump (POST, or kill -HUP ${process.pid}) writes the last ${hindsight.durationMs / 60_000} min to ${hindsight.output}`,
    ...burstLine(agent, exporter.intervalMs, burst.names),
    ...(alert === undefined ? [] : [`  alerts    ${alert.rules.length} rules of ${alert.file}; events on rezolus.alerts.> (stream REZOLUS_ALERTS), incident files in ${resolve(alert.capture.dir)}`]),
    '  Ctrl-C stops everything started here.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  dumpOnHangup(() => running.hindsight.dump('sighup'), log);
  untilSignal(() => running.stop(), log);
  // never on without its bus: when the private server cannot be kept up, stop and exit 1
  void running.failed.then(async (error) => {
    log.fatal({ code: error.code }, error.message);
    process.stderr.write(`rezolus up: ${error.message}\n`);
    await running.stop().catch(() => undefined);
    process.exit(1);
  });
  return undefined;
}

export const UP: CliMode = {
  options: ['config', 'nats', 'log-level', 'host', 'interval', 'scrape-interval', 'listen', 'hosts', 'data-dir', 'nats-port', 'hindsight-listen', 'view-listen', 'alerts'],
  run: upMode,
};
