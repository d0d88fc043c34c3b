import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { envValue } from './env-value.js';

/**
 * How a process authenticates to NATS and checks the server: the [nats]
 * keys besides `url`. Empty strings mean "not set". Secrets stay in files
 * (the seed) or in the environment (the password) when the operator wants.
 */
export interface NatsSecurity {
  readonly user: string;
  readonly password: string;
  readonly nkeySeedFile: string;
  readonly tlsCa: string;
  readonly tlsCert: string;
  readonly tlsKey: string;
  /** '' = the mode's default (_INBOX_<host> for the agent, _INBOX otherwise) */
  readonly inboxPrefix: string;
}

export const NO_NATS_SECURITY: NatsSecurity = { user: '', password: '', nkeySeedFile: '', tlsCa: '', tlsCert: '', tlsKey: '', inboxPrefix: '' };

/** [nats] key -> NatsSecurity field; the env var is REZOLUS_NATS_<KEY>. */
const KEYS = {
  user: 'user',
  password: 'password',
  nkey_seed_file: 'nkeySeedFile',
  tls_ca: 'tlsCa',
  tls_cert: 'tlsCert',
  tls_key: 'tlsKey',
  inbox_prefix: 'inboxPrefix',
} as const satisfies Record<string, keyof NatsSecurity>;

type Key = keyof typeof KEYS;

const INBOX_PREFIX = /^[A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*$/;

export function envName(key: Key): string {
  return `REZOLUS_NATS_${key.toUpperCase()}`;
}

/**
 * The [nats] security keys of a loaded section, each overridden by its
 * REZOLUS_NATS_<KEY> environment variable when that is set and not empty
 * (less one trailing line end, envValue), checked now (files readable, a seed that is a user seed) so a bad value
 * stops the process at start with a ConfigError naming the key.
 */
export function readNatsSecurity(
  section: Readonly<Record<string, unknown>> | undefined,
  file: string,
  env: NodeJS.ProcessEnv = process.env,
): NatsSecurity {
  const out: Record<string, string> = {};
  const source: Record<string, string> = {};
  for (const [key, field] of Object.entries(KEYS) as [Key, keyof NatsSecurity][]) {
    const raw = env[envName(key)];
    const fromEnv = raw === undefined ? '' : envValue(raw);
    if (fromEnv !== '') {
      out[field] = fromEnv;
      source[key] = envName(key);
    } else {
      out[field] = typeof section?.[key] === 'string' ? (section[key] as string) : '';
      source[key] = `${file}: [nats] ${key}`;
    }
  }
  const s = out as unknown as NatsSecurity;
  checkNatsSecurity(s, (key) => source[key] as string);
  return s;
}

/** Throws a ConfigError for the first unusable value; `at(key)` names where it came from. */
export function checkNatsSecurity(s: NatsSecurity, at: (key: Key) => string): void {
  if (s.user !== '' && s.nkeySeedFile !== '') {
    throw new ConfigError(`${at('nkey_seed_file')} and ${at('user')} are both set: give user/password or an nkey seed, not both`);
  }
  if (s.user !== '' && s.password === '') throw new ConfigError(`${at('user')} "${s.user}" needs a password ([nats] password or ${envName('password')})`);
  if (s.user === '' && s.password !== '') throw new ConfigError(`${at('password')} is set but [nats] user is empty`);
  if (s.nkeySeedFile !== '') readNkeySeed(s.nkeySeedFile, at('nkey_seed_file'));
  if (s.tlsCa !== '') readPem(s.tlsCa, 'CERTIFICATE', at('tls_ca'));
  if ((s.tlsCert === '') !== (s.tlsKey === '')) {
    throw new ConfigError(`${at(s.tlsCert === '' ? 'tls_key' : 'tls_cert')} is set without ${s.tlsCert === '' ? 'tls_cert' : 'tls_key'}: a client certificate needs both`);
  }
  if (s.tlsCert !== '') {
    readPem(s.tlsCert, 'CERTIFICATE', at('tls_cert'));
    readPem(s.tlsKey, 'PRIVATE KEY', at('tls_key'));
  }
  if (s.inboxPrefix !== '' && !INBOX_PREFIX.test(s.inboxPrefix)) {
    throw new ConfigError(`${at('inbox_prefix')} must be subject tokens without wildcards or spaces such as "_INBOX_web01", got "${s.inboxPrefix}"`);
  }
}

/** The seed bytes of an nkey user seed file; a ConfigError (never quoting the content) when it is not one. */
export function readNkeySeed(path: string, at = `nkey seed file ${path}`): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${at}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
  const seed = text.split('\n').map((l) => l.trim()).find((l) => /^S[A-Z]/.test(l)) ?? '';
  if (!/^SU[A-Z2-7]{56}$/.test(seed)) {
    throw new ConfigError(`${at}: ${path} does not hold an nkey user seed (a line of 58 characters starting with SU)`);
  }
  return new TextEncoder().encode(seed);
}

function readPem(path: string, kind: string, at: string): void {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${at}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
  if (!text.includes('-----BEGIN ') || !text.includes(kind)) throw new ConfigError(`${at}: ${path} is not a PEM ${kind.toLowerCase()} file`);
}
