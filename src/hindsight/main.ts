/**
 * `rezolus hindsight`: a service that, when triggered (SIGHUP, POST /dump,
 * or a NATS request on the control subject), writes the last `duration` of
 * the selected hosts from the JetStream stream to a Parquet file, atomically,
 * and keeps running. A trigger during a dump is queued (several queued ones
 * share the next dump), never lost. GET /status reports the window the
 * stream holds.
 */
import { resolve } from 'node:path';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { connectBus } from '../bus/connect.js';
import { checkLookback } from '../bus/replay.js';
import type { SkipStats } from '../bus/subscribe.js';
import { HINDSIGHT_CONTROL_SUBJECT, METRICS_PREFIX } from '../bus/subjects.js';
import type { HindsightConfig } from '../config/hindsight.js';
import { BadRequestError, RezolusError } from '../errors.js';
import { runRecord } from '../record/main.js';
import { bearerMatches } from '../security/bearer.js';
import { outputInside } from '../security/output-path.js';
import { controlRequestBody } from './control-request.js';

export interface DumpResult {
  readonly output: string;
  readonly rows: number;
  readonly hosts: readonly string[];
  /** frames read from the stream, and the file's size */
  readonly frames: number;
  readonly bytes: number;
  /** false when the window held nothing of the hosts: no file was written */
  readonly written: boolean;
  /** messages of the window left out, by reason (bus/subscribe.ts) */
  readonly skipped: SkipStats;
  /** frames of a second agent run for a host that was live with another one, left out */
  readonly contested: number;
  readonly trigger: string;
  readonly startedAt: string;
  readonly ms: number;
}

export interface RunningHindsight {
  readonly app: FastifyInstance;
  readonly url: string;
  /** writes a dump (queued behind a running one) to `output` (default: the configured one); resolves when the file is written */
  dump(trigger: string, output?: string): Promise<DumpResult>;
  stop(): Promise<void>;
}

/** Per host: messages held and the oldest and newest frame's store time. */
async function windowStatus(nc: NatsConnection, stream: string): Promise<Record<string, unknown>> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream, { subjects_filter: `${METRICS_PREFIX}.>` });
  const hosts: Record<string, { messages: number; oldest: string | undefined; newest: string | undefined }> = {};
  const lastBySubject = new Map<string, string>();
  for (const [subject, count] of Object.entries(info.state.subjects ?? {})) {
    const host = subject.split('.')[2] ?? '?';
    const h = (hosts[host] ??= { messages: 0, oldest: undefined, newest: undefined });
    h.messages += count;
    lastBySubject.set(subject, host);
  }
  const firstSeq = info.state.first_seq;
  for (const [subject, host] of lastBySubject) {
    const h = hosts[host];
    if (h === undefined) continue;
    const last = await jsm.streams.getMessage(stream, { last_by_subj: subject }).catch(() => null);
    const newest = last?.time.toISOString();
    if (newest !== undefined && (h.newest === undefined || newest > h.newest)) h.newest = newest;
    // STREAM.MSG.GET takes next_by_subj (the first message of a subject from a sequence); the client's type lacks it
    const first = await jsm.streams.getMessage(stream, { seq: firstSeq, next_by_subj: subject } as unknown as { seq: number }).catch(() => null);
    const oldest = first?.time.toISOString();
    if (oldest !== undefined && (h.oldest === undefined || oldest < h.oldest)) h.oldest = oldest;
  }
  return {
    stream,
    max_age_s: Number(BigInt(info.config.max_age) / 1_000_000_000n),
    oldest: info.state.first_ts,
    newest: info.state.last_ts,
    bytes: info.state.bytes,
    messages: info.state.messages,
    hosts,
  };
}

export async function runHindsight(config: HindsightConfig, log: Logger): Promise<RunningHindsight> {
  const nc = await connectBus({ url: config.natsUrl, name: 'rezolus-hindsight', log: log.child({ component: 'nats' }), security: config.nats });
  try {
    await checkLookback(nc, config.stream, BigInt(Date.now() - config.durationMs) * 1_000_000n, BigInt(Date.now()) * 1_000_000n);
  } catch (error) {
    if (error instanceof RezolusError && error.code === 'LOOKBACK') {
      await nc.close();
      throw error;
    }
    log.warn({ error: String(error) }, 'stream not there yet; dumps will fail until an agent creates it');
  }

  let running: Promise<DumpResult> | undefined;
  /** dumps waiting for the running one, by output file: triggers for the same file share one */
  const queued = new Map<string, Promise<DumpResult>>();
  let tail: Promise<unknown> = Promise.resolve();
  let dumps = 0;
  let last: DumpResult | undefined;

  const once = async (trigger: string, output: string): Promise<DumpResult> => {
    const began = Date.now();
    const rec = await runRecord(
      {
        natsUrl: config.natsUrl,
        nats: config.nats,
        hosts: config.hosts,
        intervalMs: config.intervalMs,
        durationMs: undefined,
        output,
        replay: { stream: config.stream, sinceNs: BigInt(began - config.durationMs) * 1_000_000n, untilNs: BigInt(began) * 1_000_000n },
      },
      log.child({ component: 'dump' }),
    );
    const s = await rec.done;
    dumps++;
    last = { output: resolve(s.output), rows: s.rows, hosts: s.hosts, frames: s.frames, bytes: s.bytes, written: s.written, skipped: { ...s.skipped }, contested: s.rowStats?.contested ?? 0, trigger, startedAt: new Date(began).toISOString(), ms: Date.now() - began };
    log.info(last, 'dump written');
    return last;
  };
  const start = (trigger: string, output: string): Promise<DumpResult> => {
    const p = once(trigger, output).finally(() => {
      if (running === p) running = undefined;
    });
    running = p;
    return p;
  };
  /** one dump at a time, in trigger order; a trigger while one for the same file waits joins it */
  const dump = (trigger: string, output = config.output): Promise<DumpResult> => {
    if (running === undefined && queued.size === 0) {
      const p = start(trigger, output);
      tail = p.catch(() => undefined);
      return p;
    }
    const waiting = queued.get(output);
    if (waiting !== undefined) return waiting;
    const p = tail.then(() => {
      queued.delete(output);
      return start(trigger, output);
    });
    queued.set(output, p);
    tail = p.catch(() => undefined);
    return p;
  };
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

  const app: FastifyInstance = Fastify({ loggerInstance: log.child({ component: 'http' }) as FastifyBaseLogger });
  if (config.token !== undefined) {
    const token = config.token;
    app.addHook('onRequest', async (req, reply) => {
      if (!bearerMatches(req.headers.authorization, token)) {
        return reply.code(401).header('www-authenticate', 'Bearer').send({ error: 'Authorization: Bearer <token> required' });
      }
      return undefined;
    });
  }
  app.post('/dump', async (req, reply) => {
    let output: string;
    try {
      output = requestedOutput(req.body);
    } catch (error) {
      return reply.code(400).send({ error: error instanceof Error ? error.message : String(error) });
    }
    try {
      return reply.send(await dump('http', output));
    } catch (error) {
      return reply.code(500).send({ error: String(error) });
    }
  });
  app.get('/status', async (_req, reply) => {
    const window = await windowStatus(nc, config.stream).catch((e: unknown) => ({ error: String(e) }));
    return reply.send({ window, dumping: running !== undefined, queued: queued.size > 0, dumps, last, output: resolve(config.output), duration_s: config.durationMs / 1000 });
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
      await app.close();
      control.unsubscribe();
      await tail;
      await nc.drain().catch(() => nc.close());
    },
  };
}
