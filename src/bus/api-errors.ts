/**
 * What a NATS or JetStream failure means to a caller, in one place:
 * a stream that does not exist, a request the server's permissions
 * refused, a publish that no stream answered.
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { NoRespondersError } from '@nats-io/nats-core';

/** JetStream answered "stream not found" (10059). */
export function isStreamNotFound(error: unknown): boolean {
  return error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound;
}

/** A request the server's permissions refused (nats.js reports it only in the message text). */
export function isPermissionRefusal(error: unknown): error is Error {
  return error instanceof Error && /permissions violation/i.test(error.message);
}

/**
 * A JetStream publish (a KV put) that no stream answered: status 503, which
 * the client reports as no responders or, for a KV put, as JetStream not
 * enabled. On a server that runs JetStream the stream or bucket is missing.
 */
export function isNoStreamAnswer(error: unknown): boolean {
  return error instanceof NoRespondersError || (error as { name?: string } | undefined)?.name === 'JetStreamNotEnabled';
}
