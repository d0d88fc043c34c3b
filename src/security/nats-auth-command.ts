/**
 * `rezolus nats-auth`: prints the nats-server `accounts {}` block for a list
 * of hosts (natsAuthConfig: an account per user but the admin) with fresh credentials: a random password per
 * user, or with --nkeys an nkey pair per user whose seed is written to
 * --secrets-dir with mode 0600 (only the public key goes in the config).
 * A user whose secret is already in --secrets-dir keeps it, so a host is
 * added to a fleet by running the command again with the longer list.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from '@nats-io/nats-core';
import { ConfigError } from '../errors.js';
import { natsAuthConfig } from './nats-auth-config.js';
import { authUsers, type AuthUser, type Credential } from './nats-permissions.js';

export interface NatsAuthOptions {
  /** comma-separated host names (--hosts) */
  readonly hosts?: string | undefined;
  /** a file of host names, one per line, # comments (--hosts-file) */
  readonly hostsFile?: string | undefined;
  readonly nkeys: boolean;
  /** where secrets go (0600 files): required with nkeys */
  readonly secretsDir?: string | undefined;
  readonly stream: string;
  readonly account?: string;
}

/** Host names from --hosts and --hosts-file, in order, without repeats. */
export function hostList(o: Pick<NatsAuthOptions, 'hosts' | 'hostsFile'>): string[] {
  const names = (o.hosts ?? '').split(',');
  if (o.hostsFile !== undefined) {
    let text: string;
    try {
      text = readFileSync(o.hostsFile, 'utf8');
    } catch (error) {
      throw new ConfigError(`--hosts-file ${o.hostsFile}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
    }
    names.push(...text.split('\n').map((l) => l.replace(/#.*/, '')));
  }
  const hosts = [...new Set(names.map((h) => h.trim()).filter((h) => h !== ''))];
  const bad = hosts.find((h) => /[*>\s]/.test(h));
  if (bad !== undefined) throw new ConfigError(`host "${bad}" is not a host name: nats-auth needs each host by name, no globs`);
  return hosts;
}

function secretFile(user: string, nkey: boolean): string {
  return `${user}.${nkey ? 'nk' : 'password'}`;
}

/** A secret written by an earlier run, or undefined when there is none. */
function readSecret(path: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`--secrets-dir: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? String(error)})`, { cause: error });
  }
  const secret = text.trim();
  if (secret === '') throw new ConfigError(`--secrets-dir: ${path} is empty; remove it to make a new secret`);
  return secret;
}

function userFromSeed(seed: string, path: string): ReturnType<typeof nkeys.createUser> {
  try {
    const kp = nkeys.fromSeed(new TextEncoder().encode(seed));
    if (!seed.startsWith('SU')) throw new Error('not a user seed');
    return kp;
  } catch (error) {
    throw new ConfigError(`--secrets-dir: ${path} does not hold an nkey user seed (SU...); remove it to make a new one`, { cause: error });
  }
}

function writeSecret(dir: string, file: string, content: string): void {
  const path = join(dir, file);
  try {
    // never overwrite: a seed that is replaced locks its host out
    writeFileSync(path, content, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`--secrets-dir: cannot write ${path} (${code === 'EEXIST' ? 'it exists; remove it or use another directory' : code ?? String(error)})`, { cause: error });
  }
}

/** Generates the credentials, writes the secrets and returns the config text and a summary for stderr. */
export function runNatsAuth(o: NatsAuthOptions): { config: string; summary: string } {
  const hosts = hostList(o);
  if (o.nkeys && o.secretsDir === undefined) throw new ConfigError('--nkeys needs --secrets-dir DIR: the seeds are written there, one 0600 file per user');
  if (o.secretsDir !== undefined) {
    if (existsSync(o.secretsDir) && !statSync(o.secretsDir).isDirectory()) throw new ConfigError(`--secrets-dir ${o.secretsDir} is not a directory`);
    mkdirSync(o.secretsDir, { recursive: true, mode: 0o700 });
  }
  const seeds = new Map<string, string>();
  const kept = new Set<string>();
  const credential = (user: string): Credential => {
    const existing = o.secretsDir === undefined ? undefined : readSecret(join(o.secretsDir, secretFile(user, o.nkeys)));
    if (existing !== undefined) kept.add(user);
    if (!o.nkeys) return { kind: 'password', password: existing ?? randomBytes(18).toString('base64url') };
    const kp = existing === undefined ? nkeys.createUser() : userFromSeed(existing, join(o.secretsDir ?? '', secretFile(user, true)));
    seeds.set(user, new TextDecoder().decode(kp.getSeed()));
    return { kind: 'nkey', publicKey: kp.getPublicKey() };
  };
  const users: AuthUser[] = authUsers(hosts, o.stream, credential);
  const lines: string[] = [];
  if (o.secretsDir !== undefined) {
    for (const u of users) {
      const secret = u.credential.kind === 'password' ? u.credential.password : (seeds.get(u.name) as string);
      const file = secretFile(u.name, u.credential.kind === 'nkey');
      if (!kept.has(u.name)) writeSecret(o.secretsDir, file, `${secret}\n`);
      lines.push(`  ${u.name}: ${join(o.secretsDir, file)}${kept.has(u.name) ? ' (kept)' : ''}`);
    }
  }
  const how = o.nkeys
    ? 'each process: [nats] nkey_seed_file = "<its .nk file>"'
    : 'each process: [nats] user = "<user>" and password (or REZOLUS_NATS_PASSWORD)';
  const summary = [
    `rezolus nats-auth: ${users.length} users for ${hosts.length} host(s), the admin in account ${o.account ?? 'REZOLUS'} (JetStream), every other user in an account of its own; ${how}.`,
    ...(lines.length > 0 ? ['secrets (mode 0600):', ...lines] : ['the passwords are in the config above only (--secrets-dir DIR also writes one 0600 file per user)']),
    'create the stream and the buckets once as rezolus-admin, with rezolus setup (--alerts for the alert events stream and state bucket): the agents and rezolus-alert may not.',
  ].join('\n');
  return { config: natsAuthConfig(users, { account: o.account ?? 'REZOLUS', stream: o.stream }), summary };
}
