import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';

import { humanDestination, wantsHumanLogs } from './human.js';

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

/**
 * The one root logger of a process, to stderr by default: JSON lines, or
 * human lines when stderr is a terminal (REZOLUS_LOG_FORMAT=json|human
 * decides instead); components take `root.child({ component })`.
 */
export function createLogger(level: LevelWithSilent = 'info', name = 'rezolus', destination?: DestinationStream): Logger {
  const to = destination ?? (wantsHumanLogs() ? humanDestination(2, process.env.NO_COLOR === undefined) : pino.destination(2));
  return pino({ name, level, base: { pid: process.pid }, serializers: SERIALIZERS }, to);
}

/** A logger that drops everything, for tests and pure code paths. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
