/**
 * A full garbage collection, for tests and benches that read memory after it:
 * V8's `gc` made reachable at run time (node runs them without --expose-gc).
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');

export const fullGc = runInNewContext('gc') as () => void;
