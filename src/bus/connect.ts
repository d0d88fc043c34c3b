import { connect, type NatsConnection } from '@nats-io/transport-node';
import { PermissionViolationError, TimeoutError } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { NO_NATS_SECURITY, type NatsSecurity } from '../config/nats.js';
import { RezolusError } from '../errors.js';
import { findCause } from './api-errors.js';
import { explainConnectError, isTransient, securityOptions } from './auth.js';

export interface ConnectOptions {
  /** one URL or a comma-separated list */
  readonly url: string;
  /** connection name shown by the server (`agent-<host>`, `exporter`) */
  readonly name: string;
  readonly log: Logger;
  /** keep trying the first connect instead of failing (agents that start before the bus) */
  readonly waitOnFirstConnect?: boolean;
  /** credentials, TLS and inbox prefix ([nats] in the config); none by default */
  readonly security?: NatsSecurity | undefined;
}

const RECONNECT_WAIT_MS = 1000;

/**
 * Connects with the options the research settled on: reconnect forever,
 * `noAsyncTraces` (doubles pipelined publish speed), a 15 s ping so a dead
 * server is noticed in under a minute. Connection state changes are logged.
 * Waiting for a first connect covers a server that is not up yet, never a
 * refused password or an untrusted certificate: those fail at once, in one
 * line naming the key to fix (the client itself would retry a TLS failure
 * forever).
 */
export async function connectBus(options: ConnectOptions): Promise<NatsConnection> {
  const servers = options.url.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (servers.length === 0) throw new RezolusError('NATS_URL', 'no NATS URL given');
  const security = options.security ?? NO_NATS_SECURITY;
  const wait = options.waitOnFirstConnect ?? true;
  const opts = {
    servers,
    name: options.name,
    maxReconnectAttempts: -1,
    waitOnFirstConnect: false,
    reconnectTimeWait: RECONNECT_WAIT_MS,
    pingInterval: 15_000,
    noAsyncTraces: true,
    ...securityOptions(security, servers),
  };
  let nc: NatsConnection | undefined;
  for (let warned = false; nc === undefined; ) {
    try {
      nc = await connect(opts);
    } catch (error) {
      const timeout = findCause(error, TimeoutError) !== undefined;
      if (!wait || !(isTransient(error) || timeout)) {
        throw new RezolusError('NATS_CONNECT', `cannot connect to NATS at ${options.url}: ${explainConnectError(error, security)}`, { cause: error });
      }
      if (!warned) options.log.warn({ url: options.url, err: error }, 'NATS does not answer yet; retrying every second');
      warned = true;
      await new Promise((r) => setTimeout(r, RECONNECT_WAIT_MS));
    }
  }
  INBOX_PREFIXES.set(nc, security.inboxPrefix);
  void watchStatus(nc, options.log);
  return nc;
}

const INBOX_PREFIXES = new WeakMap<NatsConnection, string>();

/** The inbox prefix a connection was made with ('' = the client default, _INBOX). */
export function inboxPrefixOf(nc: NatsConnection): string {
  return INBOX_PREFIXES.get(nc) ?? '';
}

/** Called with each subject the server refused this connection to publish to. */
export type RefusalListener = (subject: string, error: Error) => void;

const REFUSAL_LISTENERS = new WeakMap<NatsConnection, Set<RefusalListener>>();

/**
 * A core publish the server's permissions refuse comes back only as an
 * asynchronous `Permissions Violation for Publish to "<subject>"` status
 * error (the message is not stored, no ack ever comes): listeners learn of
 * it here. Returns the unsubscribe function.
 */
export function onPublishRefused(nc: NatsConnection, listener: RefusalListener): () => void {
  let set = REFUSAL_LISTENERS.get(nc);
  if (set === undefined) REFUSAL_LISTENERS.set(nc, (set = new Set()));
  set.add(listener);
  return () => set.delete(listener);
}

async function watchStatus(nc: NatsConnection, log: Logger): Promise<void> {
  for await (const s of nc.status()) {
    switch (s.type) {
      case 'disconnect':
        log.warn({ server: s.server }, 'disconnected from NATS');
        break;
      case 'reconnect':
        log.info({ server: s.server }, 'reconnected to NATS');
        break;
      case 'error':
        if (s.error instanceof PermissionViolationError && s.error.operation === 'publish') {
          const listeners = REFUSAL_LISTENERS.get(nc);
          // a listener that handles it logs it with what was lost
          if (listeners !== undefined && listeners.size > 0) {
            for (const l of listeners) l(s.error.subject, s.error);
            break;
          }
        }
        log.error({ err: s.error }, 'NATS error');
        break;
      default:
        break;
    }
  }
}

/** Whether a connection is up right now, kept current from its status events. */
export interface ConnectionState {
  readonly connected: boolean;
}

export function connectionState(nc: NatsConnection): ConnectionState {
  const state = { connected: !nc.isClosed() };
  void (async () => {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect' || s.type === 'close') state.connected = false;
      else if (s.type === 'reconnect') state.connected = true;
    }
    state.connected = false;
  })();
  void nc.closed().then(() => {
    state.connected = false;
  });
  return state;
}
