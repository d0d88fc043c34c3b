// npm start: set up what is missing, build, and run `rezolus up` with any extra arguments.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { buildNative } from './build-native.mjs';
import { ensureWeb } from './build-web.mjs';
import { ROOT, build, ensureDebian, ensureNpm } from './setup.mjs';

ensureNpm();
ensureDebian([['/usr/sbin/nats-server', 'nats-server']]);
buildNative();
build();
await ensureWeb();
const child = spawn(process.execPath, [join(ROOT, 'dist', 'cli', 'rezolus.js'), 'up', ...process.argv.slice(2)], {
  stdio: 'inherit',
});
// The child gets Ctrl-C from the terminal itself; forward a plain kill too.
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + 2 : 1)));
