/**
 * `rezolus hindsight`: a service that, when triggered (SIGHUP, POST /dump,
 * or a NATS request on the control subject), writes the last `duration` of
 * the selected hosts from the JetStream stream to a Parquet file, atomically,
 * and keeps running (dumps.ts). A trigger during a dump is queued, never
 * lost. GET /status reports the window the stream holds (window-status.ts).
 * The HTTP side is built in app.ts and listened on here.
 */
import { dirname, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Subscription } from '@nats-io/nats-core';
import { checkLookback } from '../bus/replay.js';
import { HINDSIGHT_CONTROL_SUBJECT } from '../bus/subjects.js';
import type { HindsightConfig } from '../config/hindsight.js';
import { BadRequestError, ConfigError, LookbackError, RezolusError } from '../errors.js';
import { unwritableReason } from '../files/writable.js';
import { outputInside } from '../security/output-path.js';
import { BusLink } from '../sources/link.js';
import { buildHindsightApp } from './app.js';
import { controlRequestBody } from './control-request.js';
import { DumpQueue, type DumpResult } from './dumps.js';
import { windowStatus } from './window-status.js';
import { closeHttpApp } from '../http/close.js';

export type { DumpResult } from './dumps.js';

export interface RunningHindsight {
  readonly app: FastifyInstance;
  readonly url: string;
  /** writes a dump (queued behind a running one) to `output` (default: the configured one); resolves when the file is written */
  dump(trigger: string, output?: string): Promise<DumpResult>;
  stop(): Promise<void>;
}

export async function runHindsight(config: HindsightConfig, log: Logger): Promise<RunningHindsight> {
  // refused now, not with an HTTP 500 during the incident the dump is for
  const unwritable = unwritableReason(dirname(resolve(config.output)), false);
  if (unwritable !== undefined) throw new ConfigError(`hindsight output ${config.output}: ${unwritable} (set [general] output, or -o)`);
  const bus = await BusLink.open({ url: config.natsUrl, name: 'rezolus-hindsight', security: config.nats, waitOnFirstConnect: true }, log);
  const nc = bus.nc;
  try {
    await checkLookback(nc, config.stream, BigInt(Date.now() - config.durationMs) * 1_000_000n, BigInt(Date.now()) * 1_000_000n);
  } catch (error) {
    if (error instanceof LookbackError) {
      await nc.close();
      throw error;
    }
    log.warn({ err: error }, 'stream not there yet; dumps will fail until an agent creates it');
  }
  const dumps = new DumpQueue(config, bus, log);
  const dump = (trigger: string, output?: string): Promise<DumpResult> => dumps.dump(trigger, output);

  /** The output a request asks for (JSON {"output": "name.parquet"}), inside the configured directory. */
  const requestedOutput = (body: unknown): string => {
    if (body === undefined || body === null || body === '') return config.output;
    if (typeof body !== 'object' || Array.isArray(body)) throw new BadRequestError('the request body must be a JSON object such as {"output": "incident-42.parquet"}');
    const asked = (body as { output?: unknown }).output;
    return asked === undefined ? config.output : outputInside(config.output, asked);
  };

  const control: Subscription = nc.subscribe(HINDSIGHT_CONTROL_SUBJECT, {
    callback: (error, msg) => {
      if (error !== null) return;
      let output: string;
      try {
        output = requestedOutput(controlRequestBody(msg));
      } catch (e) {
        const why = e instanceof Error ? e.message : String(e);
        // refused, not dumped: a server answer redirected here has no reply subject to answer on
        log.warn({ subject: msg.subject, reply: msg.reply ?? null, error: why }, 'refused a message on the control subject: no dump');
        msg.respond(JSON.stringify({ ok: false, error: why }));
        return;
      }
      dump('nats', output).then(
        (r) => msg.respond(JSON.stringify({ ok: true, ...r })),
        (e: unknown) => msg.respond(JSON.stringify({ ok: false, error: String(e) })),
      );
    },
  });

  // ready means the server has the subscription: a request sent right after start is answered, not lost
  // (across accounts a request nobody has subscribed to yet gets no "no responders", only a timeout)
  await nc.flush().catch((error: unknown) => log.debug({ err: error }, 'flush after subscribing failed; the subscription is sent again on reconnect'));

  const app = buildHindsightApp({
    token: config.token,
    requestedOutput,
    dump,
    status: async () => {
      const window = await windowStatus(nc, config.stream).catch((e: unknown) => ({ error: String(e) }));
      return { window, ...dumps.state(), output: resolve(config.output), duration_s: config.durationMs / 1000 };
    },
    log: log.child({ component: 'http' }),
  });
  try {
    await app.listen({ host: config.listen.host, port: config.listen.port });
  } catch (error) {
    control.unsubscribe();
    await nc.close();
    const code = (error as { code?: string }).code ?? String(error);
    throw new RezolusError('LISTEN_FAILED', `cannot listen on ${config.listen.host}:${config.listen.port} (${code}); choose another with --listen`, { cause: error });
  }
  const port = (app.server.address() as { port: number }).port;
  log.info({ port, subject: HINDSIGHT_CONTROL_SUBJECT }, 'hindsight ready: SIGHUP, POST /dump or a NATS request dump the window');
  return {
    app,
    url: `http://${config.listen.host.includes(':') ? `[${config.listen.host}]` : config.listen.host}:${port}`,
    dump,
    async stop() {
      await closeHttpApp(app);
      control.unsubscribe();
      await dumps.idle();
      await bus.close();
    },
  };
}
