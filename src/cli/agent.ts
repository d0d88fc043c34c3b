import type { LevelWithSilent } from 'pino';
import { agentRestartFailure } from '../agent/node-flags.js';
import { applyAgentV8Flags } from '../agent/v8-flags.js';
import { AGENT_SPEC, loadAgentConfig } from '../config/agent.js';
import { createLogger } from '../log/logger.js';
import { SAMPLERS } from '../samplers/registry.js';
import { runIntervalMs } from '../samplers/types.js';
import { configPath, durationFlag, keySpec, levelFlag, natsFlag, serviceNats } from './flags.js';
import type { CliContext, CliMode } from './mode.js';
import { untilSignal } from './signals.js';

const INTERVAL = keySpec(AGENT_SPEC.defaults, 'interval');

/** `rezolus agent`: samplers to frames on NATS, until a signal. */
async function agentMode({ flags }: CliContext): Promise<undefined> {
  const config = loadAgentConfig(configPath('agent', flags), SAMPLERS, {
    host: flags.host,
    natsUrl: natsFlag(flags),
    intervalMs: durationFlag(INTERVAL, flags.interval, '--interval'),
    logLevel: levelFlag(flags['log-level']),
  });
  const cfg = { ...config, procfs: flags.procfs ?? config.procfs, sysfs: flags.sysfs ?? config.sysfs };
  const log = createLogger(cfg.logLevel as LevelWithSilent);
  // V8 flags by the fastest sampler as the agent will run it (agent/v8-flags.ts): a sampler's own minimum
  // interval applies, and kernel samplers with [kernel] off do not run
  const intervals = SAMPLERS.flatMap((d) => {
    const own = cfg.samplers[d.name];
    if (own === undefined || !own.enabled || (d.kernel === true && !cfg.kernel.enabled)) return [];
    return [runIntervalMs(d, own.intervalMs)];
  });
  // the CLI's entry restarted the process under node's own flags, or could not (agent/node-flags.ts)
  const notRestarted = agentRestartFailure();
  if (notRestarted !== undefined) log.warn({ reason: notRestarted }, 'agent runs without its node flags: more CPU and RSS');
  applyAgentV8Flags(process.env, Math.min(...intervals, Number.POSITIVE_INFINITY));
  // Each mode loads only its own code: the agent never pays for fastify (~12 MB RSS).
  const { runAgent } = await import('../agent/main.js');
  const running = await runAgent({ ...cfg, natsUrl: await serviceNats(flags, cfg.natsUrl, log) }, log, { mallocTrim: true, reduceHeap: true });
  untilSignal(() => running.stop(), log);
  return undefined;
}

export const AGENT: CliMode = {
  options: ['config', 'nats', 'log-level', 'host', 'interval', 'procfs', 'sysfs'],
  run: agentMode,
};
