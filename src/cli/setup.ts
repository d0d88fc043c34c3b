/**
 * `rezolus setup`: creates or updates the stream and buckets once, as the
 * admin (src/setup/provision.ts), prints what is ready and exits.
 */
import { loadAgentConfig } from '../config/agent.js';
import { loadAlertsConfig } from '../config/alerts.js';
import { NO_NATS_SECURITY } from '../config/nats.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log/logger.js';
import { metricCatalog } from '../samplers/catalog.js';
import { SAMPLER_NAMES } from '../samplers/registry.js';
import { configPath, levelFlag, natsFlag, serviceNats } from './flags.js';
import type { CliContext, CliMode } from './mode.js';

async function setupMode(ctx: CliContext): Promise<number> {
  const { flags } = ctx;
  if (ctx.positionals.length > 0) throw new ConfigError(`unexpected argument "${ctx.positionals[0]}" (rezolus setup takes --config, --alerts and --nats)`);
  // the agents' config: [stream] and its buckets' settings, and [nats] (the admin's credentials, or the environment's)
  const config = loadAgentConfig(configPath('agent', flags), SAMPLER_NAMES, { natsUrl: natsFlag(flags) });
  const alerts = flags.alerts === undefined ? undefined : loadAlertsConfig(flags.alerts, metricCatalog());
  const log = createLogger(levelFlag(flags['log-level']) ?? 'warn');
  const { runSetup } = await import('../setup/provision.js');
  await runSetup(
    {
      natsUrl: await serviceNats(flags, config.natsUrl, log),
      nats: config.nats ?? NO_NATS_SECURITY,
      stream: config.stream,
      descriptorTtlMs: config.descriptorTtlMs,
      alerts: alerts === undefined ? undefined : { maxAgeMs: alerts.eventsMaxAgeMs, maxBytes: alerts.eventsMaxBytes, replicas: alerts.replicas },
    },
    log,
    (line) => process.stdout.write(`${line}\n`),
  );
  return 0;
}

export const SETUP: CliMode = {
  options: ['config', 'alerts', 'nats', 'log-level'],
  run: setupMode,
};
