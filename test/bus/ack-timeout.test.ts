import test from 'ava';
import { AckTimeout } from '../../src/bus/ack-timeout.js';

test('fast acks keep the configured timeout', (t) => {
  const a = new AckTimeout(2000);
  t.is(a.ms, 2000);
  for (let i = 0; i < 100; i++) a.sample(1 + (i % 3));
  t.is(a.ms, 2000);
});

test('acks slower than the timeout raise it above them, up to the ceiling', (t) => {
  const a = new AckTimeout(2000, 30_000);
  for (let i = 0; i < 5; i++) a.sample(3000);
  t.true(a.ms > 3000, `timeout ${a.ms} ms after 3 s acks`);
  t.true(a.ms <= 30_000);
  for (let i = 0; i < 20; i++) a.sample(60_000);
  t.is(a.ms, 30_000);
});

test('once the server is fast again the timeout comes back down to the floor', (t) => {
  const a = new AckTimeout(2000);
  for (let i = 0; i < 5; i++) a.sample(8000);
  const high = a.ms;
  for (let i = 0; i < 60; i++) a.sample(2);
  t.true(high > 8000);
  t.is(a.ms, 2000);
});

test('bad samples and bounds are refused', (t) => {
  const a = new AckTimeout(100, 1000);
  a.sample(Number.NaN);
  a.sample(-5);
  a.sample(Number.POSITIVE_INFINITY);
  t.is(a.ms, 100);
  t.throws(() => new AckTimeout(0));
  t.throws(() => new AckTimeout(2000, 1000));
});
