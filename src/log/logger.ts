import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** The one root logger of a process; components take `root.child({ component })`. */
export function createLogger(level: LevelWithSilent = 'info', name = 'rezolus'): Logger {
  return pino({ name, level, base: { pid: process.pid } }, pino.destination(2));
}

/** A logger that drops everything, for tests and pure code paths. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
