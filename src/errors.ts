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
