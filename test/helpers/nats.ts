import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServer } from '../../src/up/nats-server.js';

export const NATS_SERVER_BIN = '/usr/sbin/nats-server';

export interface TestNats extends NatsServer {
  readonly dataDir: string;
  /** kill -9, then start again on the same port and store */
  crashAndRestart(downMs: number): Promise<TestNats>;
  /** stop the server and remove its store */
  dispose(): Promise<void>;
}

/**
 * A private `nats-server -js` on a free loopback port with a temp store.
 * Tests never touch a server they did not start (a shared one may listen on 4222).
 */
export async function startTestNats(port = 0, dataDir?: string): Promise<TestNats> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'rezolus-nats-test-'));
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port, dataDir: dir });
  const self: TestNats = {
    ...server,
    dataDir: dir,
    async crashAndRestart(downMs: number) {
      server.process.kill('SIGKILL');
      await new Promise((r) => server.process.once('exit', r));
      await new Promise((r) => setTimeout(r, downMs));
      return startTestNats(server.port, dir);
    },
    async dispose() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}
