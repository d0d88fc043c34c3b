/**
 * The accounts `rezolus nats-auth` lays its users out in. The stream, the
 * buckets and the admin live in one account (JetStream enabled); every other
 * user gets an account of its own: one per host, one per consumer role.
 *
 * Why: nats-server answers a JetStream API request, and acks a JetStream
 * publish, on whatever reply subject the client names, with the server's own
 * rights and in the requester's account. A user sharing the stream's account
 * could name another host's frame subject, descriptor or status key, or the
 * hindsight control subject as its reply and have the server write there.
 * Through a service import the reply is mapped (`_R_...`) and the answer is
 * delivered back in the requester's own account, where nothing stores it and
 * nothing imports it anywhere.
 *
 * An account imports exactly what its user may publish, as services from the
 * stream's account (a frame published through the import is stored and acked
 * back like any other). A consumer imports the frames it reads live as
 * streams: from each host's account, which exports its own frame subjects
 * (nats-server 2.9 does not pass a message that arrived through a service
 * import on to a stream import), and from the stream's account (frames its
 * admin publishes). Hindsight exports the control subject it answers to the
 * stream's account, whose admin triggers dumps. A user that watches a
 * bucket (the alert evaluator, the exporter) imports `_INBOX.>` from the
 * stream's account as a stream: a push consumer delivers there, on the
 * inbox its client chose. Pure: users in, accounts out.
 */
import { ConfigError } from '../errors.js';
import type { AuthUser } from './nats-permissions.js';

export interface ServiceExport {
  readonly kind: 'service';
  readonly subject: string;
  /** the accounts that may import it */
  readonly accounts: readonly string[];
  /** many answers to one request (a pull consumer's messages) */
  readonly streamed: boolean;
}

export interface StreamExport {
  readonly kind: 'stream';
  readonly subject: string;
  readonly accounts: readonly string[];
}

export interface Import {
  readonly kind: 'service' | 'stream';
  /** the exporting account */
  readonly account: string;
  readonly subject: string;
  /** the exporter sees who asked (Nats-Request-Info): hindsight refuses what the server itself sends */
  readonly share?: boolean;
}

export interface Account {
  readonly name: string;
  readonly jetstream: boolean;
  readonly users: readonly AuthUser[];
  readonly exports: readonly (ServiceExport | StreamExport)[];
  readonly imports: readonly Import[];
}

/** The account a user lives in: the home account for the admin, one of its own for every other user. */
export function accountOf(user: AuthUser, home: string): string {
  if (user.role === 'admin' || user.permissions === undefined) return home;
  return user.role === 'agent' ? `${home}_HOST_${user.host ?? user.name}` : `${home}_${user.role.toUpperCase()}`;
}

/** a pull consumer answers one MSG.NEXT request with many messages */
const isStreamed = (subject: string): boolean => subject.startsWith('$JS.API.CONSUMER.MSG.NEXT.');
/** replies come back on the user's own inbox, inside its own account */
const isInbox = (subject: string): boolean => subject.startsWith('_INBOX');

/** Whether every subject `narrow` matches is matched by `wide` (NATS wildcards `*` and a trailing `>`). */
export function subjectCovers(wide: string, narrow: string): boolean {
  const w = wide.split('.');
  const n = narrow.split('.');
  for (let i = 0; i < w.length; i++) {
    if (w[i] === '>') return i < n.length;
    if (i >= n.length || n[i] === '>' || (w[i] !== '*' && (n[i] === '*' || w[i] !== n[i]))) return false;
  }
  return w.length === n.length;
}

type Grants = Map<string, Map<string, string[]>>;

/** records that `account` may import `subject` from `from` */
function grant(grants: Grants, from: string, subject: string, account: string): void {
  const subjects = grants.get(from) ?? new Map<string, string[]>();
  const accounts = subjects.get(subject) ?? [];
  if (!accounts.includes(account)) accounts.push(account);
  subjects.set(subject, accounts);
  grants.set(from, subjects);
}

/**
 * The accounts for `users`: `home` holds JetStream and the admin and exports
 * what the others import; each other user is alone in its account.
 */
export function accountLayout(users: readonly AuthUser[], home: string): Account[] {
  const services: Grants = new Map();
  const streams: Grants = new Map();
  const imports = new Map<string, Import[]>([[home, []]]);
  const own = users.flatMap((user) => {
    const name = accountOf(user, home);
    return name === home || user.permissions === undefined ? [] : [{ user, name, p: user.permissions }];
  });
  for (const { user, name } of own) {
    if (imports.has(name)) throw new ConfigError(`two users in account ${name}: ${user.name} and another`);
    imports.set(name, []);
  }
  const add = (to: string, i: Import): void => void imports.get(to)?.push(i);
  for (const { name, p } of own) {
    const served = p.serves ?? [];
    for (const subject of p.publish) {
      grant(services, home, subject, name);
      add(name, { kind: 'service', account: home, subject });
    }
    for (const subject of p.subscribe) {
      if (isInbox(subject) || served.includes(subject)) continue;
      // what others publish under it through their own service imports (a host's frames)
      for (const other of own) {
        for (const published of other.p.publish) {
          if (other.name === name || !subjectCovers(subject, published)) continue;
          grant(streams, other.name, published, name);
          add(name, { kind: 'stream', account: other.name, subject: published });
        }
      }
      grant(streams, home, subject, name);
      add(name, { kind: 'stream', account: home, subject });
    }
    // push-consumer deliveries (a KV watch) land in the stream's account, on the subjects given
    for (const subject of p.pushed ?? []) {
      grant(streams, home, subject, name);
      add(name, { kind: 'stream', account: home, subject });
    }
    for (const subject of served) {
      grant(services, name, subject, home);
      add(home, { kind: 'service', account: name, subject, share: true });
    }
  }
  const exportsOf = (account: string): (ServiceExport | StreamExport)[] => [
    ...[...(services.get(account) ?? [])].map(([subject, accounts]): ServiceExport => ({ kind: 'service', subject, accounts, streamed: isStreamed(subject) })),
    ...[...(streams.get(account) ?? [])].map(([subject, accounts]): StreamExport => ({ kind: 'stream', subject, accounts })),
  ];
  const account = (name: string, accountUsers: readonly AuthUser[]): Account => ({
    name, jetstream: name === home, users: accountUsers, exports: exportsOf(name), imports: imports.get(name) ?? [],
  });
  return [account(home, users.filter((u) => accountOf(u, home) === home)), ...own.map(({ user, name }) => account(name, [user]))];
}

