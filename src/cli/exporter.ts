import type { LevelWithSilent } from 'pino';
import { EXPORTER_SPEC, loadExporterConfig } from '../config/exporter.js';
import { createLogger } from '../log/logger.js';
import { configPath, durationFlag, hostsFlag, keySpec, levelFlag, listenFlag, natsFlag, serviceNats } from './flags.js';
import type { CliContext, CliMode } from './mode.js';
import { untilSignal } from './signals.js';

const GENERAL = EXPORTER_SPEC.general;

/** `rezolus exporter`: Prometheus /metrics from the frames on NATS, until a signal. */
async function exporterMode({ flags }: CliContext): Promise<undefined> {
  const config = loadExporterConfig(configPath('exporter', flags), {
    listen: listenFlag(keySpec(GENERAL, 'listen'), flags.listen, '--listen'),
    hosts: hostsFlag(keySpec(GENERAL, 'hosts'), flags.hosts, '--hosts'),
    intervalMs: durationFlag(keySpec(GENERAL, 'interval'), flags.interval, '--interval'),
    natsUrl: natsFlag(flags),
    logLevel: levelFlag(flags['log-level']),
  });
  const log = createLogger(config.logLevel as LevelWithSilent);
  const { runExporter } = await import('../exporter/main.js');
  const running = await runExporter({ ...config, natsUrl: await serviceNats(flags, config.natsUrl, log) }, log);
  untilSignal(() => running.stop(), log);
  return undefined;
}

export const EXPORTER: CliMode = {
  options: ['config', 'nats', 'log-level', 'listen', 'hosts', 'interval'],
  run: exporterMode,
};
