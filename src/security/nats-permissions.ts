/**
 * The nats-server permissions of each rezolus role, and the `accounts {}`
 * block that gives them to one user per host plus the consumers. Pure: the
 * credentials come in, the config text goes out (`rezolus nats-auth` wraps
 * it). The subject lists were measured with a tracing nats-server 2.9.10
 * watching each process (see the README's Security section).
 */
import { ConfigError } from '../errors.js';
import { CONTRACT, DESCRIPTOR_BUCKET, HINDSIGHT_CONTROL_SUBJECT, METRICS_PREFIX, STATUS_BUCKET, agentInboxPrefix, hostToken } from '../bus/subjects.js';

export interface Permissions {
  readonly publish: readonly string[];
  readonly subscribe: readonly string[];
  /** may answer the requests it receives (the hindsight control subject) */
  readonly allowResponses?: boolean;
}

export type Credential =
  | { readonly kind: 'password'; readonly password: string }
  | { readonly kind: 'nkey'; readonly publicKey: string };

export type Role = 'agent' | 'exporter' | 'recorder' | 'hindsight' | 'admin';

export interface AuthUser {
  /** user name (for an nkey user: the name its seed file carries) */
  readonly name: string;
  readonly role: Role;
  /** the host token of an agent */
  readonly host?: string;
  readonly credential: Credential;
  /** undefined = every right in the account (the admin) */
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
    ],
    subscribe: [`${agentInboxPrefix(h)}.>`],
  };
}

/**
 * A consumer (exporter, recorder, hindsight): read frames live and from the
 * stream (ordered and durable consumers, direct and stored message gets), read
 * the descriptor and status buckets; publish nothing else.
 */
export function consumerPermissions(role: 'exporter' | 'recorder' | 'hindsight', stream: string): Permissions {
  const read = (s: string): string[] => [
    `$JS.API.STREAM.INFO.${s}`,
    `$JS.API.STREAM.MSG.GET.${s}`,
    `$JS.API.DIRECT.GET.${s}`,
    `$JS.API.DIRECT.GET.${s}.>`,
  ];
  // The exporter follows frames live and reads the buckets: no consumer of the stream at all.
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
  ];
  const subscribe = [`${METRICS_PREFIX}.>`, '_INBOX.>'];
  if (role !== 'hindsight') return { publish, subscribe };
  return { publish, subscribe: [...subscribe, HINDSIGHT_CONTROL_SUBJECT], allowResponses: true };
}

/**
 * The users for a list of hosts: one agent user per host, the three
 * consumers and an admin (creates the stream and buckets, triggers dumps).
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
  users.push({ name: 'rezolus-admin', role: 'admin', credential: credential('rezolus-admin'), permissions: undefined });
  return users;
}

const q = (s: string): string => JSON.stringify(s);

function list(items: readonly string[], indent: string): string {
  return `[\n${items.map((i) => `${indent}  ${q(i)}`).join('\n')}\n${indent}]`;
}

const ROLE_NOTE: Record<Role, string> = {
  agent: 'publishes only its own frames and status; reads only its own replies',
  exporter: 'reads frames, the stream and the buckets',
  recorder: 'reads frames, the stream and the buckets',
  hindsight: 'reads like the recorder; answers dump requests on the control subject',
  admin: 'every right in the account: creates the stream and the buckets, triggers dumps',
};

function userBlock(u: AuthUser): string {
  const id = u.credential.kind === 'password'
    ? `user: ${q(u.name)}, password: ${q(u.credential.password)}`
    : `nkey: ${q(u.credential.publicKey)}`;
  const head = `      # ${u.name}${u.host !== undefined ? ` (host ${u.host})` : ''}: ${ROLE_NOTE[u.role]}`;
  if (u.permissions === undefined) return `${head}\n      { ${id} }`;
  const p = u.permissions;
  const lines = [
    `      { ${id}, permissions: {`,
    `          publish: { allow: ${list(p.publish, '          ')} }`,
    `          subscribe: { allow: ${list(p.subscribe, '          ')} }`,
    ...(p.allowResponses === true ? ['          allow_responses: true'] : []),
    '      } }',
  ];
  return `${head}\n${lines.join('\n')}`;
}

/** The nats-server config fragment: one account with JetStream and every user. */
export function natsAuthConfig(users: readonly AuthUser[], o: { readonly account: string; readonly stream: string }): string {
  return [
    `# rezolus-nats users and permissions (rezolus nats-auth), stream ${o.stream}, prefix ${CONTRACT.prefix}`,
    '# Include it in the nats-server config (or merge the account into yours); kill -HUP the server reloads it.',
    'accounts {',
    `  ${o.account} {`,
    '    jetstream: enabled',
    '    users: [',
    users.map(userBlock).join('\n'),
    '    ]',
    '  }',
    '}',
    '',
  ].join('\n');
}
