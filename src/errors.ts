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
