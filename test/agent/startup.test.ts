/**
 * The agent's start-up steps (src/agent/startup.ts): a step that takes
 * long is said while it runs, with how long so far, and one that blocked
 * the event loop (no timer could fire) is said when the next step begins.
 */
import test from 'ava';
import pino from 'pino';
import { StartupSteps } from '../../src/agent/startup.js';
import { until } from '../helpers/until.js';

function capture(): { log: pino.Logger; msgs: string[] } {
  const msgs: string[] = [];
  return { log: pino({ level: 'info' }, { write: (s: string) => void msgs.push((JSON.parse(s) as { msg: string }).msg) }), msgs };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('a long step is said while it runs, again and again, and when it ends; a quick one not at all', async (t) => {
  const { log, msgs } = capture();
  const steps = new StartupSteps(log, 100);
  steps.step('connecting to NATS at nats://x');
  // (over at once)
  steps.step('waiting for JetStream at nats://x');
  t.true(await until(() => msgs.length >= 2, 20_000), 'said while it runs');
  steps.done();
  const said = msgs.map((m) => m.replace(/\d+ s/, 'N s'));
  t.deepEqual(said, [...Array(said.length - 1).fill('still waiting for JetStream at nats://x (N s so far)'), 'waiting for JetStream at nats://x: took N s']);
  await sleep(300);
  t.is(msgs.length, said.length, 'nothing after done()');
});

test('a step that blocks the event loop is said when the next one begins', (t) => {
  const { log, msgs } = capture();
  const steps = new StartupSteps(log, 100);
  steps.step('starting sampler blockio_latency');
  const until = Date.now() + 150;
  while (Date.now() < until);
  steps.step('starting sampler cpu_usage');
  steps.done();
  t.deepEqual(msgs, ['starting sampler blockio_latency: took 0 s']);
});
