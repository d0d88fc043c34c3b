import { main } from './main.js';

main(process.argv.slice(2)).then(
  (code) => {
    // a one-shot mode has said what it had to: exit now, whatever is left open (a NATS
    // connection still trying a server that accepted and never answered would keep the
    // process alive). stdout and stderr are synchronous on Linux, so nothing is cut off.
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    process.stderr.write(`rezolus: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
