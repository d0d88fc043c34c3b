/** Options for an in-process `runUp` on fixture procfs, free ports and a private server in `dataDir`: no BPF, no HTTP snapshot. */
import { join } from 'node:path';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { SAMPLERS } from '../../src/samplers/registry.js';
import type { UpOptions } from '../../src/up/main.js';
import { NO_KERNEL, PROC, SYS } from './fixtures.js';
import { NATS_SERVER_BIN } from './nats.js';

export function fixtureUpOptions(dataDir: string, host: string, intervalMs?: number): UpOptions {
  const agent = loadAgentConfig(undefined, SAMPLERS, { host, logLevel: 'silent', intervalMs });
  return {
    natsUrl: undefined,
    forcePrivatePort: 0,
    privatePort: 0,
    natsServer: NATS_SERVER_BIN,
    dataDir,
    agent: { ...agent, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL, http: undefined },
    exporter: loadExporterConfig(undefined, { listen: { host: '127.0.0.1', port: 0 }, hosts: host, logLevel: 'silent' }),
    hindsight: loadHindsightConfig(undefined, { listen: { host: '127.0.0.1', port: 0 }, output: join(dataDir, 'h.parquet'), logLevel: 'silent' }),
  };
}
