import { ConfigError } from '../errors.js';
import { formatDuration, parseDuration, hostsProblem, parseListen, parseNatsUrls, parseSize } from './units.js';

/** One config key: its type, default and the comment written above it in config/*.toml. */
export type KeySpec =
  | { readonly type: 'string'; readonly default: string; readonly doc: string }
  | { readonly type: 'nats'; readonly default: string; readonly doc: string }
  | { readonly type: 'hosts'; readonly default: string; readonly doc: string }
  | { readonly type: 'boolean'; readonly default: boolean; readonly doc: string }
  | { readonly type: 'integer'; readonly default: number; readonly min: number; readonly max: number; readonly doc: string }
  | { readonly type: 'duration'; readonly default: string; readonly minMs: number; readonly maxMs?: number; readonly doc: string }
  | { readonly type: 'size'; readonly default: string; readonly doc: string }
  | { readonly type: 'listen'; readonly default: string; readonly doc: string }
  | { readonly type: 'enum'; readonly default: string; readonly values: readonly string[]; readonly doc: string }
  | { readonly type: 'quantiles'; readonly default: readonly number[]; readonly doc: string }
  | { readonly type: 'names'; readonly default: readonly string[]; readonly doc: string };

export interface SectionSpec {
  readonly doc: string;
  readonly keys: Readonly<Record<string, KeySpec>>;
}

export type FileSpec = Readonly<Record<string, SectionSpec>>;

/** A validated value: durations in ms, sizes in bytes, listen as {host, port}. */
export type ConfigValue = string | boolean | number | readonly number[] | readonly string[] | { host: string; port: number };

const METRIC_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export const logSection: SectionSpec = {
  doc: 'Logging, on stderr: JSON lines (pino), or human-readable lines when stderr is a terminal; env REZOLUS_LOG_FORMAT=json or human chooses, NO_COLOR drops the colours.',
  keys: { level: { type: 'enum', default: 'info', values: LEVELS, doc: 'One of fatal, error, warn, info, debug, trace, silent.' } },
};

export const natsSection: SectionSpec = {
  doc: 'The NATS server(s). --nats and REZOLUS_NATS_URL override this.',
  keys: {
    url: { type: 'nats', default: 'nats://127.0.0.1:4222', doc: 'Server URL, or several separated by commas (a cluster).' },
    user: { type: 'string', default: '', doc: 'User name, with password (`rezolus nats-auth` generates per-host users and their permissions). Env REZOLUS_NATS_USER overrides.' },
    password: { type: 'string', default: '', doc: 'Password of user. Env REZOLUS_NATS_PASSWORD overrides (keeps it out of the file; one trailing line end is dropped, as a variable filled from a file has).' },
    nkey_seed_file: { type: 'string', default: '', doc: 'Instead of user/password: a file (mode 0600) holding an nkey user seed (SU...). Env REZOLUS_NATS_NKEY_SEED_FILE overrides.' },
    tls_ca: { type: 'string', default: '', doc: 'PEM file of the CA that signed the server certificate (a tls:// URL or a server with tls {}). Env REZOLUS_NATS_TLS_CA overrides.' },
    tls_cert: { type: 'string', default: '', doc: 'PEM client certificate, for a server with tls { verify: true }; needs tls_key. Env REZOLUS_NATS_TLS_CERT overrides.' },
    tls_key: { type: 'string', default: '', doc: 'PEM key of tls_cert. Env REZOLUS_NATS_TLS_KEY overrides.' },
    inbox_prefix: {
      type: 'string', default: '',
      doc: 'Prefix of reply subjects (acks, JetStream API replies). Empty = _INBOX_<host> for the agent (so a per-host user may subscribe to its own replies only), _INBOX for the others. Env REZOLUS_NATS_INBOX_PREFIX overrides.',
    },
  },
};

function where(file: string, section: string, key: string): string {
  return `${file}: [${section}] ${key}`;
}

/** Checks one value against its spec; throws ConfigError quoting file, key and value. */
export function validateValue(spec: KeySpec, raw: unknown, file: string, section: string, key: string): ConfigValue {
  return checkValue(spec, raw, where(file, section, key));
}

/**
 * Checks a command-line flag (or environment variable) against the spec of
 * the key it overrides; the message names the flag (`--interval must be ...`).
 * A duration flag says its minimum up front: a flag has no comment above it.
 */
export function validateFlag(spec: KeySpec, raw: string, flag: string): ConfigValue {
  if (spec.type === 'duration') {
    const ms = parseDuration(raw);
    if (ms === undefined || ms < spec.minMs) {
      throw new ConfigError(`${flag} must be a duration of at least ${spec.minMs}ms such as "100ms" or "1s", got ${JSON.stringify(raw)}`);
    }
    return ms;
  }
  return checkValue(spec, raw, flag);
}

/** validateValue and validateFlag: `at` names the key or the flag. */
function checkValue(spec: KeySpec, raw: unknown, at: string): ConfigValue {
  const shown = JSON.stringify(raw);
  switch (spec.type) {
    case 'string':
      if (typeof raw !== 'string') throw new ConfigError(`${at} must be a string, got ${shown}`);
      return raw;
    case 'nats':
      if (typeof raw !== 'string' || parseNatsUrls(raw) === undefined) {
        throw new ConfigError(`${at} must be a NATS URL such as "nats://127.0.0.1:4222" (several separated by commas), got ${shown}`);
      }
      return raw;
    case 'hosts': {
      const problem = typeof raw === 'string' ? hostsProblem(raw) : 'it is not a string';
      if (typeof raw !== 'string' || problem !== undefined) {
        throw new ConfigError(`${at} must be "*" (every host) or a comma-separated list of host names and globs (web-*), got ${shown}: ${problem}`);
      }
      return raw;
    }
    case 'boolean':
      if (typeof raw !== 'boolean') throw new ConfigError(`${at} must be true or false, got ${shown}`);
      return raw;
    case 'integer': {
      const n = typeof raw === 'bigint' ? Number(raw) : raw;
      if (typeof n !== 'number' || !Number.isInteger(n) || n < spec.min || n > spec.max) {
        throw new ConfigError(`${at} must be an integer from ${spec.min} to ${spec.max}, got ${shown}`);
      }
      return n;
    }
    case 'duration': {
      const ms = typeof raw === 'string' ? parseDuration(raw) : undefined;
      if (ms === undefined) throw new ConfigError(`${at} must be a duration such as "100ms", "1s" or "15m", got ${shown}`);
      if (ms < spec.minMs) throw new ConfigError(`${at} must be at least ${spec.minMs}ms, got ${shown}`);
      if (spec.maxMs !== undefined && ms > spec.maxMs) throw new ConfigError(`${at} must be at most ${formatDuration(spec.maxMs)}, got ${shown}`);
      return ms;
    }
    case 'size': {
      const bytes = typeof raw === 'string' ? parseSize(raw) : undefined;
      if (bytes === undefined || bytes <= 0) throw new ConfigError(`${at} must be a size such as "64MiB" or "1GiB", got ${shown}`);
      return bytes;
    }
    case 'listen': {
      const l = typeof raw === 'string' ? parseListen(raw) : undefined;
      if (l === undefined) throw new ConfigError(`${at} must be HOST:PORT such as "0.0.0.0:4242", got ${shown}`);
      return l;
    }
    case 'enum':
      if (typeof raw !== 'string' || !spec.values.includes(raw)) {
        throw new ConfigError(`${at} must be one of ${spec.values.join(', ')}, got ${shown}`);
      }
      return raw;
    case 'quantiles':
      if (!Array.isArray(raw) || raw.length === 0 || raw.some((q) => typeof q !== 'number' || !(q >= 0 && q <= 1))) {
        throw new ConfigError(`${at} must be a non-empty list of quantiles between 0 and 1, got ${shown}`);
      }
      return raw as number[];
    case 'names':
      if (!Array.isArray(raw) || raw.some((n) => typeof n !== 'string' || !METRIC_NAME.test(n))) {
        throw new ConfigError(`${at} must be a list of metric names such as ["cpu_usage"] (may be empty), got ${shown}`);
      }
      return [...new Set(raw as string[])];
  }
}

/** The default of a key, validated like a value from a file. */
export function defaultValue(spec: KeySpec): ConfigValue {
  return validateValue(spec, spec.default, '(defaults)', '', '');
}
