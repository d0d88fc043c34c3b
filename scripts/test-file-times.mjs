// Where the test suite's time goes: loaded into each ava worker with
//   npm test -- --node-arguments=--import=./scripts/test-file-times.mjs
// (or `npx ava --node-arguments=... FILE…`), it appends one line per test file
// to test-file-times.tsv in the working directory when the worker exits:
// seconds from the worker's start to its exit, CPU seconds of the worker
// itself (its child processes not counted), and the file. A file whose wall
// time is far beyond its tests' own durations holds its worker with something
// left running: a timer, a socket, a child (test/helpers/until.ts, `within`).
// Sort with `sort -rn test-file-times.tsv | head`.
import { appendFileSync } from 'node:fs';

const started = Date.now();
let file = '?';
/** ava sends each worker its options (the test file among them) as its first message */
const onMessage = (message) => {
  if (message?.ava?.type !== 'options') return;
  file = String(message.ava.options.file).replace(/^.*?\/test\//, 'test/');
  process.removeListener('message', onMessage);
};
process.on('message', onMessage);
process.on('exit', () => {
  const usage = process.resourceUsage();
  const cpu = (usage.userCPUTime + usage.systemCPUTime) / 1e6;
  appendFileSync('test-file-times.tsv', `${((Date.now() - started) / 1000).toFixed(1)}\t${cpu.toFixed(1)}\t${file}\n`);
});
