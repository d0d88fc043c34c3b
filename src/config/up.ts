import { dirname, resolve } from 'node:path';
import type { FileSpec } from './schema.js';
import { logSection } from './schema.js';
import { loadConfig } from './load.js';
import { parseDuration } from './units.js';
import { ConfigError } from '../errors.js';

export const UP_SPEC: FileSpec = {
  general: {
    doc: 'The embedded default: `rezolus up` runs a private nats-server (unless given a URL), an agent, an exporter, a hindsight service, the viewer and the alert evaluator.',
    keys: {
      data_dir: { type: 'string', default: './data', doc: 'Where the private nats-server keeps its JetStream store and log, relative to the current directory. --data-dir overrides.' },
      agent_config: { type: 'string', default: 'agent.toml', doc: 'Agent config, relative to this file.' },
      exporter_config: { type: 'string', default: 'exporter.toml', doc: 'Exporter config, relative to this file.' },
      hindsight_config: { type: 'string', default: 'hindsight.toml', doc: 'Hindsight config, relative to this file.' },
      alerts_config: { type: 'string', default: 'alerts.toml', doc: 'Alert rules and evaluator config, relative to this file; "" runs no evaluator. --alerts off overrides.' },
      oversample_interval: {
        type: 'string',
        default: '100ms',
        doc: 'Sampling interval of the samplers behind the exporter\'s burst view (the counters in [oversample] metrics of exporter.toml: cpu_usage, network_interfaces, blockio_diskstats), so that each scrape interval holds several samples and <family>_rate{percentile="1"} shows the fastest one: a 300 ms burst the 1 s average flattens. Overrides their intervals in agent.toml (a fleet\'s agents keep those); "" leaves agent.toml\'s intervals. --interval (every sampler) overrides this.',
      },
    },
  },
  nats: {
    doc: 'Which NATS to use. With no URL (here, --nats or REZOLUS_NATS_URL), up starts a private nats-server and never uses one it did not start.',
    keys: {
      url: { type: 'string', default: '', doc: 'Use this server and start none.' },
      server: { type: 'string', default: '/usr/sbin/nats-server', doc: 'The nats-server binary for the private server.' },
      port: { type: 'integer', default: 4222, min: 0, max: 65535, doc: 'Loopback port of the private server; when something else holds it, a free port is taken instead (0 = always a free port). --nats-port N insists on N.' },
    },
  },
  log: logSection,
};

export interface UpConfig {
  readonly file: string;
  readonly dataDir: string;
  readonly agentConfig: string | undefined;
  readonly exporterConfig: string | undefined;
  readonly hindsightConfig: string | undefined;
  /** undefined: the built-in alert defaults (no rules); '' : no evaluator */
  readonly alertsConfig: string | undefined;
  /** sampling interval of the burst view's samplers; undefined = agent.toml's */
  readonly oversampleIntervalMs: number | undefined;
  readonly natsUrl: string;
  readonly natsServer: string;
  readonly natsPort: number;
  readonly logLevel: string;
}

/**
 * Loads up.toml. The agent and exporter config paths are resolved next to
 * it; with no up.toml they are config/agent.toml and config/exporter.toml
 * when those exist, else the built-in defaults.
 */
export function loadUpConfig(path: string | undefined, defaultsDir: string | undefined): UpConfig {
  const f = loadConfig(path, UP_SPEC);
  const s = (section: string, key: string): unknown => f.sections[section]?.[key];
  const base = path !== undefined ? dirname(path) : defaultsDir;
  const rel = (key: string): string | undefined => (base === undefined ? undefined : resolve(base, s('general', key) as string));
  return {
    file: f.path,
    dataDir: s('general', 'data_dir') as string,
    agentConfig: rel('agent_config'),
    exporterConfig: rel('exporter_config'),
    hindsightConfig: rel('hindsight_config'),
    alertsConfig: s('general', 'alerts_config') === '' ? '' : rel('alerts_config'),
    oversampleIntervalMs: oversampleInterval(s('general', 'oversample_interval') as string, f.path),
    natsUrl: s('nats', 'url') as string,
    natsServer: s('nats', 'server') as string,
    natsPort: s('nats', 'port') as number,
    logLevel: s('log', 'level') as string,
  };
}

/** [general] oversample_interval: "" = none, else a duration of 10 ms or more. */
function oversampleInterval(raw: string, file: string): number | undefined {
  if (raw === '') return undefined;
  const ms = parseDuration(raw);
  if (ms === undefined || ms < 10) throw new ConfigError(`${file}: [general] oversample_interval must be "" or a duration of at least 10ms such as "100ms", got ${JSON.stringify(raw)}`);
  return ms;
}
