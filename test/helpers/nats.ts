import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServer } from '../../src/up/nats-server.js';

export const NATS_SERVER_BIN = '/usr/sbin/nats-server';
const STORE_PREFIX = join(tmpdir(), 'rezolus-nats-test-');

/**
 * Kills test servers orphaned by an earlier run that was killed before its
 * cleanup ran (their parent is gone, so PID 1 adopted them), and removes
 * their temp dir. `ours` gives that dir from a server's argv, or undefined
 * for a server that is not ours to touch.
 */
export function reapOrphans(ours: (argv: readonly string[]) => string | undefined): void {
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const ppid = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1];
      const dir = cmd[0] === NATS_SERVER_BIN && ppid === '1' ? ours(cmd) : undefined;
      if (dir !== undefined) {
        process.kill(Number(pid), 'SIGKILL');
        rmSync(dir, { recursive: true, force: true });
      }
    } catch {
      // the process ended meanwhile, or is not ours to read
    }
  }
}
// single servers: their store (-sd) is one of our temp dirs
reapOrphans((cmd) => {
  const store = cmd[cmd.indexOf('-sd') + 1] ?? '';
  return store.startsWith(STORE_PREFIX) && !store.slice(STORE_PREFIX.length).includes('/') ? store : undefined;
});

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
export async function startTestNats(port = 0, dataDir?: string, configFile?: string): Promise<TestNats> {
  const dir = dataDir ?? mkdtempSync(STORE_PREFIX);
  const server = await startNatsServer({ binary: NATS_SERVER_BIN, port, dataDir: dir, configFile });
  const self: TestNats = {
    ...server,
    dataDir: dir,
    async crashAndRestart(downMs: number) {
      server.process.kill('SIGKILL');
      await new Promise((r) => server.process.once('exit', r));
      await new Promise((r) => setTimeout(r, downMs));
      return startTestNats(server.port, dir, configFile);
    },
    async dispose() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return self;
}
