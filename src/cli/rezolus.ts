// Before anything else loads: `rezolus agent` starts again under node flags that only node's
// command line takes (agent/node-flags.ts); it runs without TurboFan at 1 Hz, and flags set
// once the CLI's modules are loaded come after their start-up was optimised (agent/v8-flags.ts);
// its threads share one malloc arena, which must be set before V8's workers make theirs
// (agent/malloc-arenas.ts).
import { applyAgentMallocArenas } from '../agent/malloc-arenas.js';
import { restartWithAgentNodeFlags } from '../agent/node-flags.js';
import { applyEarlyAgentV8Flags } from '../agent/v8-flags.js';

restartWithAgentNodeFlags(process.argv.slice(2), process.env);
applyAgentMallocArenas(process.argv.slice(2), process.env);
applyEarlyAgentV8Flags(process.argv.slice(2), process.env);
const { main } = await import('./main.js');

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
