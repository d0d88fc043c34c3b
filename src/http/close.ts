/**
 * Closing an HTTP app on shutdown without waiting on its clients.
 *
 * Fastify's close() ends idle keep-alive connections at once, but waits for
 * every response still being written. A client that stops reading a large
 * /metrics body (or a test that reads only the status) keeps its response
 * unfinished, and close() with it: one such client held an exporter's stop
 * for 47 s here. After `graceMs` the connections left are destroyed.
 *
 * A response under way on a keep-alive connection (a Prometheus scrape)
 * leaves its connection open and idle when it ends: close() would wait on it
 * to the end of the grace. Idle connections are ended every SWEEP_MS meanwhile.
 */
import type { FastifyInstance } from 'fastify';

/** How long responses under way may finish once a close has begun. */
export const CLOSE_GRACE_MS = 2000;
/** How often idle connections (a keep-alive one whose response just ended) are ended during the grace. */
const SWEEP_MS = 50;

export async function closeHttpApp(app: FastifyInstance, graceMs = CLOSE_GRACE_MS): Promise<void> {
  const closed = app.close();
  const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
  const sweep = setInterval(() => app.server.closeIdleConnections(), SWEEP_MS);
  try {
    await closed;
  } finally {
    clearTimeout(timer);
    clearInterval(sweep);
  }
}
