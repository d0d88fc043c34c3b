// Tests that measure the machine itself (CPU bursts, loopback traffic) run
// after the main suite, one file at a time, so other tests do not disturb them.
export default {
  files: ['test/quiet/**/*.test.ts'],
  extensions: { ts: 'module' },
  nodeArguments: ['--import=tsx'],
  workerThreads: false,
  concurrency: 1,
  timeout: '2m',
};
