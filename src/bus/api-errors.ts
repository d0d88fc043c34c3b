/**
 * What a NATS or JetStream failure means to a caller, in one place: a
 * stream that does not exist, a request the server's permissions refused,
 * a publish that no stream answered or that can never fit.
 *
 * nats.js 3.4 reports a request's failure as a RequestError whose `cause`
 * is what the server said: a PermissionViolationError (with its operation
 * and subject) or a NoRespondersError; a KV put that no stream answered
 * comes as JetStreamNotEnabled over that same chain; a JetStream API error
 * is a JetStreamApiError with its numeric `code`. So these walk `cause` and
 * test classes and codes, never a message, except where the client gives
 * nothing but a message (exceedsMaxPayload, isServerWithoutTls below).
 * test/bus/api-errors.test.ts checks each against a real nats-server.
 */
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { ConnectionError, InvalidArgumentError, NoRespondersError, PermissionViolationError } from '@nats-io/nats-core';
import { MessageTooLargeError, NoStreamError, PublishRefusedError } from '../errors.js';

/** JetStream API error codes rezolus acts on that nats.js does not name (nats-server's server/errors.json). */
export const JS_API_CODES = {
  /** JSStreamSubjectOverlapErr: a new stream's subjects overlap another stream's */
  StreamSubjectOverlap: 10065,
  /** JSStreamMessageExceedsMaximumErr: a message larger than the stream's max_msg_size */
  MessageExceedsMaximum: 10054,
} as const;

/** Causes are followed this deep at most (a chain that loops ends here). */
const MAX_CAUSES = 8;

/** The first error of class `type` in `error`'s chain of causes, `error` itself first. */
export function findCause<T extends Error>(error: unknown, type: abstract new (...args: never[]) => T): T | undefined {
  let e = error;
  for (let i = 0; i < MAX_CAUSES && e !== null && e !== undefined; i++) {
    if (e instanceof type) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The JetStream API error code in the chain (JetStreamApiCodes, JS_API_CODES), if JetStream answered with an error. */
export function jetStreamCode(error: unknown): number | undefined {
  return findCause(error, JetStreamApiError)?.code;
}

/** JetStream answered "stream not found" (10059). */
export function isStreamNotFound(error: unknown): boolean {
  return jetStreamCode(error) === JetStreamApiCodes.StreamNotFound;
}

/** A new stream's subjects overlap those of a stream that exists (10065). */
export function isSubjectOverlap(error: unknown): boolean {
  return jetStreamCode(error) === JS_API_CODES.StreamSubjectOverlap;
}

/**
 * The server's permissions refused something this request needed: a
 * publish to its subject, or the subscription to its reply inbox. Undefined
 * when the failure was something else.
 */
export function permissionViolation(error: unknown): PermissionViolationError | undefined {
  return findCause(error, PermissionViolationError);
}

/**
 * A JetStream publish (a KV put) that no stream answered: status 503, which
 * the client reports as no responders or, for a KV put, as JetStream not
 * enabled with the no responders as its cause. On a server that runs
 * JetStream the stream or bucket is missing.
 */
export function isNoStreamAnswer(error: unknown): boolean {
  return findCause(error, NoRespondersError) !== undefined;
}

/**
 * The client refuses a payload above the server's max_payload before it
 * sends it, with an InvalidArgumentError that carries nothing but its text
 * ("'payload' max_payload size exceeded", nats-core protocol.js), and
 * InvalidArgumentError is what every other bad argument throws too. The
 * text is read here only; publishFailure turns it into MessageTooLargeError.
 */
function exceedsMaxPayload(error: unknown): boolean {
  return error instanceof InvalidArgumentError && error.message.includes('max_payload size exceeded');
}

/**
 * A TLS connect to a server without TLS: the client says so only in the
 * text of a ConnectionError ("server does not support 'tls'", nats-core
 * options.js), the class of every other connect failure too. The text is
 * read here only.
 */
export function isServerWithoutTls(error: unknown): boolean {
  return findCause(error, ConnectionError)?.message.includes("does not support 'tls'") === true;
}

/**
 * A publish's failure as the error a publisher acts on:
 * MessageTooLargeError (it can never fit: the client's max_payload check, or
 * the stream's max_msg_size), PublishRefusedError (the server's permissions
 * refused it), NoStreamError (no stream answered: the store is gone);
 * anything else as it came. `bytes` is the size of what was published.
 */
export function publishFailure(error: unknown, subject: string, bytes: number): unknown {
  if (exceedsMaxPayload(error) || jetStreamCode(error) === JS_API_CODES.MessageExceedsMaximum) {
    return new MessageTooLargeError(subject, bytes, { cause: error });
  }
  if (permissionViolation(error) !== undefined) return new PublishRefusedError(subject, { cause: error });
  if (isNoStreamAnswer(error)) return new NoStreamError(subject, { cause: error });
  return error;
}
