/**
 * Closing an HTTP app on shutdown without waiting on its clients.
 *
 * Fastify's close() ends idle keep-alive connections at once, but waits for
 * every response still being written. A client that stops reading a large
 * /metrics body (or a test that reads only the status) keeps its response
 * unfinished, and close() with it: one such client held an exporter's stop
 * for 47 s here. After `graceMs` the connections left are destroyed.
 */
import type { FastifyInstance } from 'fastify';

/** How long responses under way may finish once a close has begun. */
export const CLOSE_GRACE_MS = 2000;

export async function closeHttpApp(app: FastifyInstance, graceMs = CLOSE_GRACE_MS): Promise<void> {
  const closed = app.close();
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearTimeout(timer);
  }
}
