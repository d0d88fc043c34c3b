/**
 * JetStream calls at start-up that wait for a cluster still forming, and
 * say so. A fresh 3-node cluster answers clients at once but its JetStream
 * API only once it has elected a meta leader, and a stream at 3 replicas
 * only once its peers are current: until then a request gets no answer (a
 * timeout) or "temporarily unavailable", and an agent that gave up after
 * one 5-s request exited blaming a server "without JetStream" (seen when
 * the agent started beside the cluster, as a deployment without health
 * checks does). Such failures are retried every RETRY_MS for as long as it
 * takes, logged once at warn and then every STILL_EVERY_MS with how long it
 * has been; anything else (JetStream not enabled, a refusal, a conflict) is
 * thrown at once, as before.
 */
import { TimeoutError } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { findCause, jetStreamCode } from './api-errors.js';

/** JetStream API error codes a cluster gives while it forms (nats-server's server/errors.json). */
export const NOT_READY_CODES = {
  /** JSClusterNoPeersErr "no suitable peers for placement": the meta leader has not heard from enough peers yet */
  NoPeers: 10005,
  /** JSClusterNotAvailErr "JetStream system temporarily unavailable" */
  NotAvailable: 10008,
} as const;

const RETRY_MS = 2000;
const STILL_EVERY_MS = 30_000;

/** A failure a cluster that is still forming gives: no answer in time, or one of NOT_READY_CODES. */
export function isNotReadyYet(error: unknown): boolean {
  if (findCause(error, TimeoutError) !== undefined) return true;
  const code = jetStreamCode(error);
  return code === NOT_READY_CODES.NoPeers || code === NOT_READY_CODES.NotAvailable;
}

export interface ReadyOptions {
  readonly log: Logger;
  /** what is waited for, as the log says it: "JetStream at nats://a,nats://b" */
  readonly what: string;
  readonly retryMs?: number;
  readonly stillEveryMs?: number;
}

/** Runs `call` until it succeeds or fails with something other than isNotReadyYet; says what it waits for while it does. */
export async function untilReady<T>(call: () => Promise<T>, o: ReadyOptions): Promise<T> {
  const started = Date.now();
  let saidAt: number | undefined;
  for (;;) {
    try {
      const value = await call();
      if (saidAt !== undefined) o.log.info({ waited_s: seconds(started) }, `${o.what} answers after ${seconds(started)} s`);
      return value;
    } catch (error) {
      if (!isNotReadyYet(error)) throw error;
      const now = Date.now();
      if (saidAt === undefined) {
        o.log.warn({ err: error }, `${o.what} does not answer yet (a cluster that has not elected its JetStream meta leader, or whose nodes are not current): retrying every ${(o.retryMs ?? RETRY_MS) / 1000} s`);
        saidAt = now;
      } else if (now - saidAt >= (o.stillEveryMs ?? STILL_EVERY_MS)) {
        o.log.warn({ err: error, waited_s: seconds(started) }, `still waiting for ${o.what} after ${seconds(started)} s (is every node of the cluster up? nats-server's /healthz on each says why not)`);
        saidAt = now;
      }
      await new Promise((r) => setTimeout(r, o.retryMs ?? RETRY_MS));
    }
  }
}

function seconds(since: number): number {
  return Math.round((Date.now() - since) / 1000);
}
