import type { FileSpec } from './schema.js';
import { logSection, natsSection } from './schema.js';
import { loadConfig } from './load.js';
import { readNatsSecurity, type NatsSecurity } from './nats.js';
import { httpToken } from './http-token.js';
import { DEFAULT_STREAM } from '../bus/subjects.js';

export const HINDSIGHT_SPEC: FileSpec = {
  general: {
    doc: 'What a dump writes: the last `duration` of the selected hosts, as the JetStream stream keeps them.',
    keys: {
      hosts: { type: 'hosts', default: '*', doc: '"*" for every host, or a comma-separated list of host names and globs. --hosts overrides.' },
      duration: { type: 'duration', default: '15m', minMs: 1000, doc: "How far back a dump reaches; at most the stream's max_age ([stream] max_age in agent.toml)." },
      output: { type: 'string', default: 'hindsight.parquet', doc: 'The Parquet file a dump writes, atomically (a temporary name, then a rename). -o overrides.' },
      interval: { type: 'duration', default: '1s', minMs: 10, doc: 'Row interval of the file. --interval overrides.' },
      stream: { type: 'string', default: DEFAULT_STREAM, doc: 'The stream that holds the window.' },
    },
  },
  http: {
    doc: 'POST /dump writes a dump; GET /status reports the window held.',
    keys: {
      listen: { type: 'listen', default: '127.0.0.1:4243', doc: 'HOST:PORT (loopback by default: a dump writes a file; any other address needs a token). --listen overrides.' },
      token: {
        type: 'string', default: '',
        doc: 'Requests must carry "Authorization: Bearer <token>" (401 otherwise). Required when listen is not a loopback address. Env REZOLUS_HTTP_TOKEN overrides.',
      },
    },
  },
  nats: natsSection,
  log: logSection,
};

export interface HindsightConfig {
  readonly file: string;
  readonly hosts: string;
  readonly durationMs: number;
  readonly output: string;
  readonly intervalMs: number;
  readonly stream: string;
  readonly listen: { readonly host: string; readonly port: number };
  /** bearer token the HTTP endpoints require; '' = none (loopback only) */
  readonly token?: string;
  readonly natsUrl: string;
  /** credentials, TLS and inbox prefix ([nats]); absent = none */
  readonly nats?: NatsSecurity | undefined;
  readonly logLevel: string;
}

export interface HindsightOverrides {
  readonly hosts?: string | undefined;
  readonly output?: string | undefined;
  readonly intervalMs?: number | undefined;
  readonly listen?: { host: string; port: number } | undefined;
  /** the flag `listen` came from, named in errors (default --listen) */
  readonly listenFlag?: string | undefined;
  readonly natsUrl?: string | undefined;
  readonly logLevel?: string | undefined;
}

export function loadHindsightConfig(path: string | undefined, o: HindsightOverrides = {}): HindsightConfig {
  const f = loadConfig(path, HINDSIGHT_SPEC);
  const s = (section: string, key: string): unknown => f.sections[section]?.[key];
  const listen = o.listen ?? (s('http', 'listen') as { host: string; port: number });
  const token = httpToken(listen, s('http', 'token') as string, `${f.path}: [http]`, process.env, o.listen === undefined ? undefined : (o.listenFlag ?? '--listen'));
  return {
    file: f.path,
    hosts: o.hosts ?? (s('general', 'hosts') as string),
    durationMs: s('general', 'duration') as number,
    output: o.output ?? (s('general', 'output') as string),
    intervalMs: o.intervalMs ?? (s('general', 'interval') as number),
    stream: s('general', 'stream') as string,
    listen,
    ...(token === '' ? {} : { token }),
    natsUrl: o.natsUrl ?? (s('nats', 'url') as string),
    nats: readNatsSecurity(f.sections.nats, f.path),
    logLevel: o.logLevel ?? (s('log', 'level') as string),
  };
}
