/** Errors with a stable code and a message that names the culprit (key, value, file or resource). */
export class RezolusError extends Error {
  override readonly name: string = 'RezolusError';
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A config file, flag or environment value that cannot be used. */
export class ConfigError extends RezolusError {
  override readonly name = 'ConfigError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options);
  }
}

/** A JetStream stream or bucket exists with settings rezolus cannot work with. */
export class StreamConflictError extends RezolusError {
  override readonly name = 'StreamConflictError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('STREAM_CONFLICT', message, options);
  }
}

/** The server's permissions refused a publish (a per-host user publishing outside its own subjects). */
export class PublishRefusedError extends RezolusError {
  override readonly name = 'PublishRefusedError';
  constructor(
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super('PUBLISH_REFUSED', `NATS refused the publish to "${subject}" (Permissions Violation): this user may not publish there`, options);
  }
}

/** A request (HTTP or NATS) that asks for something not allowed; answered with 400 / ok:false. */
export class BadRequestError extends RezolusError {
  override readonly name = 'BadRequestError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('BAD_REQUEST', message, options);
  }
}

/**
 * No stream (or KV bucket) captured a publish: the server answered "no
 * responders" (status 503), or the client reported JetStream missing for a
 * KV put. On a server that was running JetStream this means the store was
 * lost: the stream or bucket is gone and must be created again.
 */
export class NoStreamError extends RezolusError {
  override readonly name = 'NoStreamError';
  constructor(
    readonly subject: string,
    options?: { cause?: unknown },
  ) {
    super('NO_STREAM', `no stream captured the publish to "${subject}" (the stream or bucket is missing)`, options);
  }
}

/**
 * The stream a consumer reads does not exist (JetStream answered "stream not
 * found"): no agent has created it on this server yet, or the server lost its
 * store. A reader may wait for it to come back.
 */
export class StreamMissingError extends RezolusError {
  override readonly name = 'StreamMissingError';
  constructor(
    readonly stream: string,
    options?: { cause?: unknown },
  ) {
    super('NO_STREAM', `stream ${stream} not found: is an agent publishing to this NATS server?`, options);
  }
}

/** NATS did not answer a request in time, or answered it with something other than what was asked (worth retrying). */
export class NatsUnavailableError extends RezolusError {
  override readonly name = 'NatsUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('NATS_UNAVAILABLE', message, options);
  }
}

/** The server's permissions refused a request this NATS user needs (a stream, a bucket, its reply inbox). */
export class NatsPermissionError extends RezolusError {
  override readonly name = 'NatsPermissionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super('NATS_PERMISSION', message, options);
  }
}

/** A window that starts before what the stream keeps (its max_age): the frames asked for are gone. */
export class LookbackError extends RezolusError {
  override readonly name = 'LookbackError';
  constructor(
    readonly stream: string,
    /** what the stream keeps, seconds (its max_age) */
    readonly keptS: number,
    /** how far back the window starts, seconds */
    readonly askedS: number,
    options?: { cause?: unknown },
  ) {
    super(
      'LOOKBACK',
      `stream ${stream} keeps only the last ${keptS} s (max_age); asked for ${askedS} s. Raise [stream] max_age in the agent config (agent.toml) to look further back`,
      options,
    );
  }
}

/**
 * A message the server will never take, however often it is sent: larger
 * than the server's max_payload (refused by the client before it leaves) or
 * than the stream's max_msg_size (refused by JetStream).
 */
export class MessageTooLargeError extends RezolusError {
  override readonly name = 'MessageTooLargeError';
  constructor(
    readonly subject: string,
    readonly bytes: number,
    options?: { cause?: unknown },
  ) {
    super('MESSAGE_TOO_LARGE', `a message of ${bytes} bytes for "${subject}" is larger than the server takes (max_payload or the stream's max_msg_size)`, options);
  }
}

/**
 * Why a fetch() failed, as people read it, where fetch says only "fetch
 * failed": `connect ECONNREFUSED 127.0.0.1:4241` (every address tried, for a
 * name such as localhost that has several), `getaddrinfo ENOTFOUND host`,
 * `no answer within 2000 ms`. Any other error: its message, with its cause.
 */
export function fetchFailure(error: unknown, timeoutMs?: number): string {
  if (!(error instanceof Error)) return String(error);
  if (error.name === 'TimeoutError') return timeoutMs === undefined ? 'no answer in time' : `no answer within ${timeoutMs} ms`;
  const detail = causeText(error.cause);
  if (detail === undefined) return error.message;
  return error.message === 'fetch failed' || error.message.includes(detail) ? detail : `${error.message}: ${detail}`;
}

function causeText(cause: unknown): string | undefined {
  // Node's happy-eyeballs connect gives an AggregateError (message '') of one error per address
  if (cause instanceof AggregateError && cause.errors.length > 0) return [...new Set(cause.errors.map((e: unknown) => causeText(e) ?? String(e)))].join('; ');
  if (!(cause instanceof Error)) return typeof cause === 'string' && cause !== '' ? cause : undefined;
  return cause.message !== '' ? cause.message : ((cause as NodeJS.ErrnoException).code ?? cause.name);
}
