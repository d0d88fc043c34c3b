/**
 * Keeps `rezolus up`'s private nats-server running: when it exits while up
 * runs, it is started again on the same store and port (the clients
 * reconnect to the same URL and the agent publishes what it buffered). When
 * it cannot be kept up, `failed` resolves with the reason and up exits: it
 * never runs on without its bus.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { RezolusError } from '../errors.js';
import type { NatsServer, NatsServerOptions } from './nats-server.js';

export interface SupervisorLimits {
  /** more exits than this within `windowMs` and up gives up */
  readonly maxRestarts: number;
  readonly windowMs: number;
  /** wait before the first restart; doubled for each further one within the window */
  readonly backoffMs: number;
}

export const DEFAULT_LIMITS: SupervisorLimits = { maxRestarts: 5, windowMs: 60_000, backoffMs: 250 };

export interface SupervisedNats {
  readonly url: string;
  /** the server running now (another object after each restart) */
  readonly server: NatsServer;
  readonly restarts: number;
  /** resolves (never rejects) when the server could not be kept up */
  readonly failed: Promise<RezolusError>;
  /** stops the server for good */
  stop(): Promise<void>;
}

type Start = (o: NatsServerOptions) => Promise<NatsServer>;

/** The last lines of the server's log: why it went, in its own words. */
function logTail(file: string, lines = 5): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function describeExit(e: { readonly code: number | null; readonly signal: NodeJS.Signals | null }): string {
  return e.signal !== null ? `killed by ${e.signal}` : `exit code ${e.code}`;
}

export async function superviseNatsServer(start: Start, options: NatsServerOptions, log: Logger, limits: SupervisorLimits = DEFAULT_LIMITS): Promise<SupervisedNats> {
  let server = await start(options);
  // a restart takes the same port: the clients know only that URL
  const again: NatsServerOptions = { ...options, port: server.port };
  let stopping = false;
  let restarts = 0;
  const exits: number[] = [];
  let fail!: (e: RezolusError) => void;
  const failed = new Promise<RezolusError>((resolve) => {
    fail = resolve;
  });

  let restarting: Promise<void> = Promise.resolve();
  const watch = (s: NatsServer): void => {
    restarting = s.exited.then(async (how) => {
      if (stopping) return;
      const now = Date.now();
      exits.push(now);
      while (exits.length > 0 && (exits[0] as number) < now - limits.windowMs) exits.shift();
      const tail = logTail(s.logFile);
      if (exits.length > limits.maxRestarts) {
        fail(
          new RezolusError(
            'NATS_SERVER_FAILED',
            `the private nats-server exited ${exits.length} times within ${limits.windowMs / 1000} s (last: ${describeExit(how)}); giving up. See ${s.logFile}${tail === '' ? '' : `:\n${tail}`}`,
          ),
        );
        return;
      }
      log.error({ server_pid: s.pid, exit: describeExit(how), log_tail: tail }, `the private nats-server exited (${describeExit(how)}); starting it again on the same store and port`);
      for (let attempt = 0; !stopping; attempt++) {
        await new Promise((r) => setTimeout(r, limits.backoffMs * 2 ** Math.min(exits.length - 1 + attempt, 6)));
        if (stopping) return;
        try {
          server = await start(again);
          if (stopping) {
            await server.stop();
            return;
          }
          restarts++;
          log.warn({ url: server.url, server_pid: server.pid, restarts }, 'the private nats-server runs again');
          watch(server);
          return;
        } catch (error) {
          if (attempt >= 2) {
            fail(new RezolusError('NATS_SERVER_FAILED', `the private nats-server exited (${describeExit(how)}) and could not be started again: ${(error as Error).message}`));
            return;
          }
          log.warn({ err: (error as Error).message, attempt: attempt + 1 }, 'starting the private nats-server again failed; trying once more');
        }
      }
    });
  };
  watch(server);

  return {
    url: server.url,
    get server() {
      return server;
    },
    get restarts() {
      return restarts;
    },
    failed,
    async stop() {
      stopping = true;
      await server.stop();
      await restarting; // a restart in flight stops its server itself
      await server.stop();
    },
  };
}
