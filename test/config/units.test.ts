import test from 'ava';
import { formatDuration, parseDuration, parseListen, parseSize } from '../../src/config/units.js';

const DURATIONS: readonly [string, number | undefined][] = [
  ['100ms', 100],
  ['1s', 1000],
  ['1.5s', 1500],
  ['15m', 900_000],
  ['2h', 7_200_000],
  ['1d', 86_400_000],
  ['10us', 0.01],
  ['250us', 0.25],
  ['0ms', 0],
  [' 2s ', 2000],
  ['5', undefined],
  ['1x', undefined],
  ['', undefined],
  ['s', undefined],
  ['-1s', undefined],
  ['.5s', undefined],
  ['1 s', undefined],
  ['1S', undefined],
  ['1sec', undefined],
  ['1e3ms', undefined],
  ['fast', undefined],
];

for (const [text, ms] of DURATIONS) {
  test(`parseDuration(${JSON.stringify(text)}) is ${String(ms)}`, (t) => {
    t.is(parseDuration(text), ms);
  });
}

const FORMATS: readonly [number, string][] = [
  [100, '100ms'],
  [1000, '1s'],
  [1500, '1500ms'],
  [90_000, '90s'],
  [900_000, '15m'],
  [7_200_000, '2h'],
  [5_400_000, '90m'],
  [86_400_000, '1d'],
  [172_800_000, '2d'],
  [0, '0ms'],
];

for (const [ms, text] of FORMATS) {
  test(`formatDuration(${ms}) is ${text} and parses back`, (t) => {
    t.is(formatDuration(ms), text);
    t.is(parseDuration(text), ms);
  });
}

const SIZES: readonly [string, number | undefined][] = [
  ['64MiB', 67_108_864],
  ['1GiB', 1_073_741_824],
  ['500MB', 500_000_000],
  ['4096', 4096],
  ['4096B', 4096],
  ['1.5KiB', 1536],
  ['2TiB', 2_199_023_255_552],
  ['1KB', 1000],
  ['10 MiB', 10_485_760],
  [' 1GB ', 1_000_000_000],
  ['0', 0],
  ['abc', undefined],
  ['', undefined],
  ['MiB', undefined],
  ['-1MiB', undefined],
  ['1PiB', undefined],
  ['1mib', undefined],
  ['99999999TiB', undefined], // beyond 2^53
];

for (const [text, bytes] of SIZES) {
  test(`parseSize(${JSON.stringify(text)}) is ${String(bytes)}`, (t) => {
    t.is(parseSize(text), bytes);
  });
}

const LISTENS: readonly [string, { host: string; port: number } | undefined][] = [
  ['0.0.0.0:4242', { host: '0.0.0.0', port: 4242 }],
  ['127.0.0.1:9090', { host: '127.0.0.1', port: 9090 }],
  ['localhost:80', { host: 'localhost', port: 80 }],
  ['[::1]:9', { host: '::1', port: 9 }],
  ['[::]:4242', { host: '::', port: 4242 }],
  [':4242', { host: '0.0.0.0', port: 4242 }],
  ['host:0', { host: 'host', port: 0 }],
  ['host:65535', { host: 'host', port: 65535 }],
  ['host:65536', undefined],
  ['host:99999', undefined],
  ['host:123456', undefined],
  ['host', undefined],
  ['host:', undefined],
  ['4242', undefined],
  ['::1:9', undefined],
  ['host:-1', undefined],
  ['host:http', undefined],
  ['', undefined],
];

for (const [text, listen] of LISTENS) {
  test(`parseListen(${JSON.stringify(text)}) is ${JSON.stringify(listen)}`, (t) => {
    t.deepEqual(parseListen(text), listen);
  });
}
