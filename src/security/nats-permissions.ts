/**
 * The nats-server permissions of each rezolus role and the users that get
 * them: one per host plus the consumers, the alert evaluator and the admin
 * (nats-accounts.ts puts each in its account, nats-auth-config.ts prints
 * them; both take only types from here, and nothing here imports them
 * back). Pure: the credentials come in, the users go out (`rezolus
 * nats-auth` wraps it). The subject lists were measured with a tracing
 * nats-server 2.9.10 watching each process (see the README's Security
 * section); test/security/trace-subjects.ts does it for the alert evaluator
 * and the exporter (`npx tsx test/security/trace-subjects.ts`).
 */
import { ALERT_STATE_BUCKET, ALERTS_PREFIX, ALERTS_STREAM } from '../alert/contract.js';
import { ConfigError } from '../errors.js';
import { DESCRIPTOR_BUCKET, HINDSIGHT_CONTROL_SUBJECT, METRICS_PREFIX, STATUS_BUCKET, agentInboxPrefix, hostToken } from '../bus/subjects.js';

export interface Permissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  /**
   * subjects it answers requests on (the hindsight control subject): it
   * subscribes to them, may answer (allow_responses), and its account exports
   * them to the stream's account, whose admin sends the requests
   */
  readonly serves?: readonly string[];
  /**
   * subjects the stream's account delivers push-consumer messages to it on,
   * imported into its account as a stream: a KV watch (an ordered push
   * consumer in nats.js 3.4) is delivered on `_INBOX.<nuid>.<n>` in the
   * account that holds the bucket, whatever the connection's inbox prefix
   */
  readonly pushed?: readonly string[];
}

export type Credential =
  | { readonly kind: 'password'; readonly password: string }
  | { readonly kind: 'nkey'; readonly publicKey: string };

export type Role = 'agent' | 'exporter' | 'recorder' | 'hindsight' | 'alert' | 'admin';

export interface AuthUser {
  /** user name (for an nkey user: the name its seed file carries) */
  readonly name: string;
  readonly role: Role;
  /** the host token of an agent */
  readonly host?: string;
  readonly credential: Credential;
  /** undefined = every right in the stream's account (the admin) */
  readonly permissions: Permissions | undefined;
}


/**
 * A host's agent: publish its own frames, put its own descriptors (under
 * `<host>.<hash>`; consumers check each one against its hash) and its own status, read the
 * JetStream state it checks at start; no right to create or change the
 * stream or the buckets (one host must not be able to shrink the fleet's
 * window), no right to read anything but its own replies.
 */
export function agentPermissions(host: string, stream: string): Permissions {
  const h = hostToken(host);
  return {
    publish: [
      `${METRICS_PREFIX}.${h}.>`,
      '$JS.API.INFO',
      `$JS.API.STREAM.INFO.${stream}`,
      `$JS.API.STREAM.INFO.KV_${DESCRIPTOR_BUCKET}`,
      `$JS.API.STREAM.INFO.KV_${STATUS_BUCKET}`,
      `$KV.${DESCRIPTOR_BUCKET}.${h}.*`,
      `$KV.${STATUS_BUCKET}.${h}`,
      `$JS.API.DIRECT.GET.KV_${STATUS_BUCKET}.$KV.${STATUS_BUCKET}.${h}`,
      // reads back its own descriptors: the probe that finds an emptied bucket (agent/store-keeper.ts)
      `$JS.API.DIRECT.GET.KV_${DESCRIPTOR_BUCKET}.$KV.${DESCRIPTOR_BUCKET}.${h}.*`,
    ],
    subscribe: [`${agentInboxPrefix(h)}.>`],
  };
}

/** Reading a stream: its info, stored and direct message gets (a direct get by sequence has no trailing token on 2.9). */
const read = (s: string): string[] => [
  `$JS.API.STREAM.INFO.${s}`,
  `$JS.API.STREAM.MSG.GET.${s}`,
  `$JS.API.DIRECT.GET.${s}`,
  `$JS.API.DIRECT.GET.${s}.>`,
];

/**
 * Following a KV bucket with a watch (alert/state-watch.ts): the bucket's
 * info, the ordered push consumer's create (the 2.9 API with name and
 * filter), its delete when it is reset after missed heartbeats, and the
 * answers to the server's flow control; the messages come on `_INBOX.>` in
 * the stream's account (`pushed`).
 */
const watch = (bucket: string): string[] => [
  `$JS.API.STREAM.INFO.KV_${bucket}`,
  `$JS.API.CONSUMER.CREATE.KV_${bucket}.>`,
  `$JS.API.CONSUMER.DELETE.KV_${bucket}.>`,
  `$JS.FC.KV_${bucket}.>`,
];

/**
 * A consumer (exporter, recorder, hindsight): read frames live and from the
 * stream (ordered and durable consumers, direct and stored message gets), read
 * the descriptor and status buckets; publish nothing else. The exporter also
 * follows the alert state bucket (its rezolus_alerts gauge), read only.
 */
export function consumerPermissions(role: 'exporter' | 'recorder' | 'hindsight', stream: string): Permissions {
  // The exporter follows frames live and reads the buckets: no consumer of the stream at all (only the alert bucket's watch).
  // Hindsight replays windows with ordered consumers (no acks). Only the recorder has durable
  // consumers (--durable) and acks. On nats-server 2.9 the CONSUMER.CREATE subject creates
  // durable consumers too, so hindsight could make one; and consumer names cannot be scoped by
  // permissions, so a user with consumer rights may pull from or delete any consumer of the stream.
  const ordered = [
    `$JS.API.CONSUMER.CREATE.${stream}`,
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.DELETE.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.FC.${stream}.>`,
  ];
  const durable = [`$JS.API.CONSUMER.DURABLE.CREATE.${stream}.>`, `$JS.ACK.${stream}.>`];
  const publish = [
    '$JS.API.INFO',
    ...read(stream),
    ...(role === 'exporter' ? [] : ordered),
    ...(role === 'recorder' ? durable : []),
    ...read(`KV_${DESCRIPTOR_BUCKET}`),
    ...read(`KV_${STATUS_BUCKET}`),
    ...(role === 'exporter' ? watch(ALERT_STATE_BUCKET) : []),
  ];
  const subscribe = [`${METRICS_PREFIX}.>`, '_INBOX.>'];
  if (role === 'exporter') return { publish, subscribe, pushed: ['_INBOX.>'] };
  if (role !== 'hindsight') return { publish, subscribe };
  return { publish, subscribe: [...subscribe, HINDSIGHT_CONTROL_SUBJECT], serves: [HINDSIGHT_CONTROL_SUBJECT] };
}

/**
 * The alert evaluator (`rezolus alert`): reads frames live and the
 * descriptors like the exporter; replays incident windows of the frames
 * stream with ordered consumers (the 2.9 create API with name and filter,
 * no durable ones, no acks); checks the events stream and publishes events
 * under `rezolus.alerts.>` (any host and rule: it evaluates the fleet);
 * writes, reads back and watches its own state bucket. It may not create or
 * change the events stream or the state bucket (the admin creates them: a
 * user that may create or update a stream chooses its subjects, and so could
 * capture the control subject or inboxes of the stream's account), publish
 * frames, or write the descriptor or status buckets.
 */
export function alertPermissions(stream: string): Permissions {
  return {
    publish: [
      '$JS.API.INFO',
      // the window's max_age for captures, and the replay's own check of the stream
      `$JS.API.STREAM.INFO.${stream}`,
      `$JS.API.CONSUMER.CREATE.${stream}.>`,
      `$JS.API.CONSUMER.INFO.${stream}.>`,
      `$JS.API.CONSUMER.DELETE.${stream}.>`,
      `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
      ...read(`KV_${DESCRIPTOR_BUCKET}`),
      `$JS.API.STREAM.INFO.${ALERTS_STREAM}`,
      `${ALERTS_PREFIX}.>`,
      ...watch(ALERT_STATE_BUCKET),
      // a compare-and-set lost: the winner's record read back
      `$JS.API.DIRECT.GET.KV_${ALERT_STATE_BUCKET}.$KV.${ALERT_STATE_BUCKET}.>`,
      // create, update (compare-and-set) and delete of records
      `$KV.${ALERT_STATE_BUCKET}.>`,
    ],
    subscribe: [`${METRICS_PREFIX}.>`, '_INBOX.>'],
    pushed: ['_INBOX.>'],
  };
}

/**
 * The users for a list of hosts: one agent user per host, the three
 * consumers, the alert evaluator and an admin (creates the stream and
 * buckets, the alert events stream and state bucket, triggers dumps).
 * `credential` gives each user name its secret.
 */
export function authUsers(hosts: readonly string[], stream: string, credential: (user: string) => Credential): AuthUser[] {
  if (hosts.length === 0) throw new ConfigError('no hosts given: --hosts web-1,web-2 or --hosts-file FILE');
  const seen = new Map<string, string>();
  for (const host of hosts) {
    const token = hostToken(host);
    const other = seen.get(token);
    if (other !== undefined) throw new ConfigError(`hosts "${other}" and "${host}" are the same subject token "${token}": one user cannot be told apart from the other`);
    seen.set(token, host);
  }
  const users: AuthUser[] = [...seen.keys()].map((h) => ({
    name: `agent-${h}`, role: 'agent', host: h, credential: credential(`agent-${h}`), permissions: agentPermissions(h, stream),
  }));
  for (const role of ['exporter', 'recorder', 'hindsight'] as const) {
    users.push({ name: `rezolus-${role}`, role, credential: credential(`rezolus-${role}`), permissions: consumerPermissions(role, stream) });
  }
  users.push({ name: 'rezolus-alert', role: 'alert', credential: credential('rezolus-alert'), permissions: alertPermissions(stream) });
  users.push({ name: 'rezolus-admin', role: 'admin', credential: credential('rezolus-admin'), permissions: undefined });
  return users;
}
