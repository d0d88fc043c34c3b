/**
 * The nats-server `accounts {}` text `rezolus nats-auth` prints: the account
 * layout of nats-accounts.ts with each user's permissions. Pure.
 */
import { CONTRACT } from '../bus/subjects.js';
import { accountLayout, type Account } from './nats-accounts.js';
import type { AuthUser, Role } from './nats-permissions.js';

const q = (s: string): string => JSON.stringify(s);

function list(items: readonly string[], indent: string): string {
  return `[\n${items.map((i) => `${indent}  ${q(i)}`).join('\n')}\n${indent}]`;
}

const ROLE_NOTE: Record<Role, string> = {
  agent: 'publishes only its own frames and status; reads only its own replies',
  exporter: 'reads frames, the stream and the buckets; follows the alert state bucket',
  recorder: 'reads frames, the stream and the buckets',
  hindsight: 'reads like the recorder; answers dump requests on the control subject',
  alert: 'reads frames, replays incident windows; publishes alert events, writes and watches the alert state bucket; creates neither',
  admin: 'every right in the stream\'s account: creates the stream, the buckets and the alert stream and bucket, triggers dumps',
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
    ...((p.serves ?? []).length > 0 ? ['          allow_responses: true'] : []),
    '      } }',
  ];
  return `${head}\n${lines.join('\n')}`;
}

function accountBlock(a: Account): string {
  const exports = a.exports.map((e) => {
    const accounts = `accounts: [${e.accounts.map(q).join(', ')}]`;
    if (e.kind === 'stream') return `      { stream: ${q(e.subject)}, ${accounts} }`;
    return `      { service: ${q(e.subject)}, ${accounts}${e.streamed ? ', response_type: stream' : ''} }`;
  });
  const imports = a.imports.map((i) => `      { ${i.kind}: { account: ${q(i.account)}, subject: ${q(i.subject)} }${i.share === true ? ', share: true' : ''} }`);
  return [
    `  ${q(a.name)} {`,
    ...(a.jetstream ? ['    jetstream: enabled'] : []),
    '    users: [',
    a.users.map(userBlock).join('\n'),
    '    ]',
    ...(exports.length > 0 ? ['    exports: [', ...exports, '    ]'] : []),
    ...(imports.length > 0 ? ['    imports: [', ...imports, '    ]'] : []),
    '  }',
  ].join('\n');
}

/**
 * The nats-server config fragment: the stream's account (JetStream, the
 * admin) and one account per other user, importing only what it uses.
 */
export function natsAuthConfig(users: readonly AuthUser[], o: { readonly account: string; readonly stream: string }): string {
  return [
    `# rezolus-nats users and permissions (rezolus nats-auth), stream ${o.stream}, prefix ${CONTRACT.prefix}`,
    '# Include it in the nats-server config (or merge the accounts into yours); kill -HUP the server reloads it.',
    `# ${o.account} holds the stream, the buckets and the admin; every other user is alone in its own account`,
    '# and imports only what it uses, so the server\'s answers to its requests stay in that account.',
    'accounts {',
    accountLayout(users, o.account).map(accountBlock).join('\n'),
    '}',
    '',
  ].join('\n');
}
