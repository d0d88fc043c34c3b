import test from 'ava';
import { join, resolve } from 'node:path';
import { httpToken } from '../../src/config/http-token.js';
import { BadRequestError, ConfigError } from '../../src/errors.js';
import { bearerMatches, isLoopback } from '../../src/security/bearer.js';
import { outputInside } from '../../src/security/output-path.js';

test('loopback addresses are told from the rest', (t) => {
  for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', '::ffff:127.0.0.1']) t.true(isLoopback(h), h);
  for (const h of ['0.0.0.0', '::', '10.0.0.1', '192.168.1.10', 'example.com', '128.0.0.1']) t.false(isLoopback(h), h);
});

test('a bearer token must match exactly', (t) => {
  const token = 's3cret-token-0123456789';
  t.true(bearerMatches(`Bearer ${token}`, token));
  t.true(bearerMatches(`bearer ${token}`, token), 'the scheme is case-insensitive');
  t.false(bearerMatches(undefined, token));
  t.false(bearerMatches('', token));
  t.false(bearerMatches(`Bearer ${token}x`, token));
  t.false(bearerMatches(`Bearer ${token.slice(0, -1)}`, token));
  t.false(bearerMatches(`Basic ${token}`, token));
  t.false(bearerMatches('Bearer ', ''), 'an empty token never matches');
});

test('a non-loopback listen needs a token; REZOLUS_HTTP_TOKEN overrides the file', (t) => {
  t.is(httpToken({ host: '127.0.0.1', port: 4241 }, '', 'agent.toml: [http]', {}), '');
  const err = t.throws(() => httpToken({ host: '0.0.0.0', port: 4241 }, '', 'agent.toml: [http]', {}), { instanceOf: ConfigError });
  t.is(err?.message, 'agent.toml: [http] listen 0.0.0.0:4241 is reachable from other hosts: set [http] token (or REZOLUS_HTTP_TOKEN), or listen on 127.0.0.1');
  t.is(httpToken({ host: '0.0.0.0', port: 4241 }, 'from-the-file-0123', 'x', {}), 'from-the-file-0123');
  t.is(httpToken({ host: '0.0.0.0', port: 4241 }, 'from-the-file-0123', 'x', { REZOLUS_HTTP_TOKEN: 'from-the-env-012345' }), 'from-the-env-012345');
  // a variable filled from a file keeps the file's line end: dropped, or every request would get a 401
  t.is(httpToken({ host: '0.0.0.0', port: 4241 }, '', 'x', { REZOLUS_HTTP_TOKEN: 'from-the-env-012345\n' }), 'from-the-env-012345');
  t.is(httpToken({ host: '0.0.0.0', port: 4241 }, '', 'x', { REZOLUS_HTTP_TOKEN: 'from-the-env-012345\r\n' }), 'from-the-env-012345');
  t.throws(() => httpToken({ host: '0.0.0.0', port: 1 }, 'short', 'x', {}), { instanceOf: ConfigError, message: /at least 16 characters, got 5/ });
});

test('a requested output stays inside the configured directory', (t) => {
  const configured = '/srv/dumps/hindsight.parquet';
  t.is(outputInside(configured, 'incident-42.parquet'), '/srv/dumps/incident-42.parquet');
  t.is(outputInside('hindsight.parquet', 'x.parquet'), resolve('x.parquet'), 'a relative configured output: the current directory');
  const refused: [unknown, RegExp][] = [
    ['../x.parquet', /has a directory part: give a plain file name, written in the output directory \/srv\/dumps$/],
    ['../../etc/x.parquet', /directory part/],
    ['sub/../../x.parquet', /directory part/],
    ['a/../b.parquet', /directory part/],
    ['link/escape.parquet', /directory part/],
    ['..\\x.parquet', /directory part/],
    ['..', /must end with \.parquet/],
    ['/tmp/x.parquet', /is an absolute path/],
    [join('/srv/dumps', 'inside.parquet'), /is an absolute path/],
    ['x.csv', /must end with \.parquet/],
    ['', /must be a file name/],
    [42, /must be a file name .*got 42/],
    ['a\0.parquet', /NUL/],
  ];
  for (const [asked, message] of refused) {
    const err = t.throws(() => outputInside(configured, asked), { instanceOf: BadRequestError }, String(asked));
    t.regex(err?.message ?? '', message, String(asked));
  }
});
