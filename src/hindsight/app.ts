/** The hindsight service's HTTP side, built without listening (tests call inject()). */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { bearerMatches } from '../security/bearer.js';
import type { DumpResult } from './dumps.js';

export interface HindsightAppOptions {
  /** the bearer token every request must carry; undefined = none (loopback) */
  readonly token: string | undefined;
  /** the output a request body asks for (throws BadRequestError when it may not) */
  readonly requestedOutput: (body: unknown) => string;
  readonly dump: (trigger: string, output: string) => Promise<DumpResult>;
  /** the body of GET /status */
  readonly status: () => Promise<Record<string, unknown>>;
  readonly log: Logger;
}

export function buildHindsightApp(o: HindsightAppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({ loggerInstance: o.log as FastifyBaseLogger });
  if (o.token !== undefined) {
    const token = o.token;
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
      output = o.requestedOutput(req.body);
    } catch (error) {
      return reply.code(400).send({ error: error instanceof Error ? error.message : String(error) });
    }
    try {
      return reply.send(await o.dump('http', output));
    } catch (error) {
      return reply.code(500).send({ error: String(error) });
    }
  });
  app.get('/status', async (_req, reply) => reply.send(await o.status()));
  return app;
}
