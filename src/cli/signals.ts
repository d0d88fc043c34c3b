import type { Logger } from '../log/logger.js';

/**
 * Runs until SIGINT/SIGTERM, then stops cleanly. A second signal more than a
 * second later exits at once; copies of the first one (a terminal Ctrl-C also
 * reaches npm and the start script, which forward it) are ignored.
 */
export function untilSignal(stop: () => Promise<void>, log: Logger): void {
  let stoppingSince = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stoppingSince > 0) {
      if (Date.now() - stoppingSince > 1000) process.exit(130);
      return;
    }
    stoppingSince = Date.now();
    log.info({ signal }, 'stopping');
    stop().then(
      () => process.exit(0),
      (error: unknown) => {
        log.error({ err: error }, 'error while stopping');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

/** A hindsight dump on each SIGHUP; a failed one is logged and the service goes on. */
export function dumpOnHangup(dump: () => Promise<unknown>, log: Logger): void {
  process.on('SIGHUP', () => {
    dump().catch((error: unknown) => log.error({ err: error }, 'dump failed'));
  });
}

/**
 * The first SIGINT and SIGTERM of a one-shot run, caught from now on: one
 * that arrives before `handle` is called (during start-up) is passed to the
 * handler as soon as it is given, so it ends the run as soon as it runs.
 */
export function catchStopSignals(): (handler: (signal: NodeJS.Signals) => void) => void {
  let early: NodeJS.Signals | undefined;
  let handler: ((signal: NodeJS.Signals) => void) | undefined;
  const forward = (signal: NodeJS.Signals): void => {
    if (handler === undefined) early = signal;
    else handler(signal);
  };
  process.once('SIGINT', forward);
  process.once('SIGTERM', forward);
  return (h) => {
    handler = h;
    if (early !== undefined) h(early);
  };
}
