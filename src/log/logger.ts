import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/**
 * Errors are logged under `err` (`log.warn({ err: error }, '...')`): pino's
 * standard serializer writes its class as `type`, its message and its stack,
 * each followed by those of its causes ("caused by: ..."), and its own
 * fields (a PermissionViolationError's operation and subject, a
 * RezolusError's code). pino has it by default; it is named here so that it
 * stays when other serializers are added.
 */
const SERIALIZERS = { err: pino.stdSerializers.err };

/** The one root logger of a process, to stderr by default; components take `root.child({ component })`. */
export function createLogger(level: LevelWithSilent = 'info', name = 'rezolus', destination: DestinationStream = pino.destination(2)): Logger {
  return pino({ name, level, base: { pid: process.pid }, serializers: SERIALIZERS }, destination);
}

/** A logger that drops everything, for tests and pure code paths. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
