import test from 'ava';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAgentConfig } from '../../src/config/agent.js';
import { loadExporterConfig } from '../../src/config/exporter.js';
import { loadHindsightConfig } from '../../src/config/hindsight.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { runUp } from '../../src/up/main.js';
import { NO_KERNEL, PROC, SYS } from '../helpers/fixtures.js';
import { NATS_SERVER_BIN } from '../helpers/nats.js';

test('up without a URL never uses a NATS server it did not start: a taken port moves the private one', async (t) => {
  // a stand-in for a shared server on the configured port: it greets like NATS and records what clients send
  const received: string[] = [];
  const sockets: Socket[] = [];
  const other = createServer((s) => {
    sockets.push(s);
    s.write('INFO {"server_id":"not-ours","version":"2.10.0","max_payload":1048576}\r\n');
    s.on('data', (d: Buffer) => received.push(d.toString('latin1')));
    s.on('error', () => undefined); // the port probe resets its connection
  });
  other.listen(0, '127.0.0.1');
  await new Promise((r) => other.once('listening', r));
  const takenPort = (other.address() as AddressInfo).port;
  const dataDir = mkdtempSync(join(tmpdir(), 'rezolus-up-private-'));
  const agent = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'private-up', logLevel: 'silent' });
  const exporter = loadExporterConfig(undefined, { listen: { host: '127.0.0.1', port: 0 }, hosts: 'private-up', logLevel: 'silent' });
  const up = await runUp(
    {
      natsUrl: undefined,
      forcePrivatePort: undefined,
      privatePort: takenPort,
      natsServer: NATS_SERVER_BIN,
      dataDir,
      agent: { ...agent, procfs: PROC, sysfs: SYS, kernel: NO_KERNEL },
      exporter,
      hindsight: loadHindsightConfig(undefined, { listen: { host: '127.0.0.1', port: 0 }, output: join(dataDir, 'h.parquet'), logLevel: 'silent' }),
    },
    silentLogger(),
  );
  try {
    t.not(up.server, undefined, 'a private server was started');
    t.is(up.natsUrl, up.server?.url ?? 'no server');
    t.not(up.server?.port, takenPort, 'on another port than the taken one');
    await up.agent.agent.tickOnce();
    t.false(received.some((d) => d.includes('CONNECT') || d.includes('PUB')), `nothing was sent to the other server: ${received.join('')}`);
  } finally {
    await up.stop();
    for (const s of sockets) s.destroy();
    other.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
