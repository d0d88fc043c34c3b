import test from 'ava';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/nats-core';
import { loadAgentConfig } from '../../src/config/agent.js';
import { NO_NATS_SECURITY, readNatsSecurity } from '../../src/config/nats.js';
import { agentSecurity } from '../../src/agent/main.js';
import { ConfigError } from '../../src/errors.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';

const TMP = mkdtempSync(join(tmpdir(), 'rezolus-nats-config-test-'));
test.after.always(() => rmSync(TMP, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const p = join(TMP, name);
  writeFileSync(p, text);
  return p;
};
const seed = file('user.nk', `${new TextDecoder().decode(nkeys.createUser().getSeed())}\n`);
const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';

test('no [nats] security keys: nothing set', (t) => {
  t.deepEqual(readNatsSecurity({ url: 'nats://x:4222' }, 'f.toml', {}), NO_NATS_SECURITY);
});

test('the environment overrides the file; REZOLUS_NATS_PASSWORD keeps the password out of it', (t) => {
  const s = readNatsSecurity({ user: 'agent-web-1', password: '' }, 'f.toml', { REZOLUS_NATS_PASSWORD: 'pw' });
  t.is(s.user, 'agent-web-1');
  t.is(s.password, 'pw');
  t.is(readNatsSecurity({ user: 'a', password: 'file' }, 'f.toml', { REZOLUS_NATS_USER: 'b', REZOLUS_NATS_PASSWORD: '' }).user, 'b');
});

test('a value from the environment loses one trailing line end (a variable filled from a file), nothing else', (t) => {
  const pw = (v: string): string => readNatsSecurity({ user: 'agent-web-1' }, 'f.toml', { REZOLUS_NATS_PASSWORD: v }).password;
  t.is(pw('s3cret\n'), 's3cret');
  t.is(pw('s3cret\r\n'), 's3cret');
  t.is(pw('s3cret\n\n'), 's3cret\n', 'one line end only');
  t.is(pw(' s3cret '), ' s3cret ', 'spaces are kept: they may be part of it');
  t.is(readNatsSecurity({ user: 'a', password: 'file' }, 'f.toml', { REZOLUS_NATS_USER: 'b\n' }).user, 'b');
  const e = t.throws(() => readNatsSecurity({ user: 'agent-web-1' }, 'f.toml', { REZOLUS_NATS_PASSWORD: '\n' }));
  t.regex(e?.message ?? '', /needs a password/, 'a bare line end is no password: the file is used, and it has none');
});

test('an nkey seed file and TLS files are accepted when they are what they claim', (t) => {
  const ca = file('ca.pem', PEM);
  const cert = file('c.pem', PEM);
  const key = file('c.key', '-----BEGIN PRIVATE KEY-----\nMII\n-----END PRIVATE KEY-----\n');
  const s = readNatsSecurity({ nkey_seed_file: seed, tls_ca: ca, tls_cert: cert, tls_key: key, inbox_prefix: '_INBOX_web1' }, 'f.toml', {});
  t.is(s.nkeySeedFile, seed);
  t.is(s.inboxPrefix, '_INBOX_web1');
});

const BAD: [string, Record<string, string>, RegExp][] = [
  ['a missing seed file', { nkey_seed_file: join(TMP, 'nope.nk') }, /^f\.toml: \[nats\] nkey_seed_file: cannot read .*nope\.nk \(ENOENT\)$/],
  ['a seed that is not a user seed', { nkey_seed_file: file('acct.nk', 'SAAGNWL3ZJXPUBMCVC7R6CCB5NQ5NIWLKPYXN5XKQ2B6ZMRCY5GGHHOB2M\n') }, /does not hold an nkey user seed \(a line of 58 characters starting with SU\)$/],
  ['a public key instead of a seed', { nkey_seed_file: file('pub.nk', 'UABCDEF\n') }, /does not hold an nkey user seed/],
  ['an unreadable CA', { tls_ca: join(TMP, 'missing-ca.pem') }, /^f\.toml: \[nats\] tls_ca: cannot read .*missing-ca\.pem \(ENOENT\)$/],
  ['a CA that is not PEM', { tls_ca: file('junk.pem', 'hello') }, /\[nats\] tls_ca: .*junk\.pem is not a PEM certificate file$/],
  ['a cert without its key', { tls_cert: file('c2.pem', PEM) }, /\[nats\] tls_cert is set without tls_key/],
  ['a user without a password', { user: 'agent-web-1' }, /\[nats\] user "agent-web-1" needs a password \(\[nats\] password or REZOLUS_NATS_PASSWORD\)$/],
  ['a password without a user', { password: 'x' }, /\[nats\] password is set but \[nats\] user is empty/],
  ['user and nkey both', { user: 'u', password: 'p', nkey_seed_file: seed }, /give user\/password or an nkey seed, not both/],
  ['an inbox prefix with a wildcard', { inbox_prefix: '_INBOX.>' }, /\[nats\] inbox_prefix must be subject tokens without wildcards/],
];
for (const [name, section, message] of BAD) {
  test(`refuses ${name} in one line`, (t) => {
    const err = t.throws(() => readNatsSecurity(section, 'f.toml', {}), { instanceOf: ConfigError });
    t.regex(err?.message ?? '', message);
    t.false((err?.message ?? '').includes('\n'));
  });
}

test('an unreadable seed file (mode 000) is refused', (t) => {
  if (process.getuid?.() === 0) {
    t.pass('root reads every file');
    return;
  }
  const p = file('locked.nk', 'SU');
  chmodSync(p, 0);
  t.throws(() => readNatsSecurity({ nkey_seed_file: p }, 'f.toml', {}), { instanceOf: ConfigError, message: /EACCES/ });
});

test('a value from the environment is named by its variable', (t) => {
  t.throws(() => readNatsSecurity({}, 'f.toml', { REZOLUS_NATS_NKEY_SEED_FILE: join(TMP, 'x.nk') }), { instanceOf: ConfigError, message: /^REZOLUS_NATS_NKEY_SEED_FILE: cannot read/ });
});

test('the agent replies under _INBOX_<host> unless an inbox prefix is set', (t) => {
  const c = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'Web01.example.com' });
  t.is(agentSecurity(c).inboxPrefix, '_INBOX_web01_example_com');
  t.is(agentSecurity({ ...c, nats: { ...NO_NATS_SECURITY, inboxPrefix: '_INBOX_custom' } }).inboxPrefix, '_INBOX_custom');
});

test('agent.toml: [http] listen on all interfaces without a token is refused at load', (t) => {
  const p = file('agent-open.toml', '[http]\nlisten = "0.0.0.0:4241"\n');
  t.throws(() => loadAgentConfig(p, SAMPLER_NAMES), { instanceOf: ConfigError, message: /agent-open\.toml: \[http\] listen 0\.0\.0\.0:4241 is reachable from other hosts: set \[http\] token/ });
  const off = file('agent-off.toml', '[http]\nenabled = false\nlisten = "0.0.0.0:4241"\n');
  t.is(loadAgentConfig(off, SAMPLER_NAMES).http, undefined, 'no endpoint, nothing to protect');
  const tokened = file('agent-token.toml', '[http]\nlisten = "0.0.0.0:4241"\ntoken = "0123456789abcdef"\n');
  t.deepEqual(loadAgentConfig(tokened, SAMPLER_NAMES).http, { host: '0.0.0.0', port: 4241, token: '0123456789abcdef' });
});
