import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorBucket, statusBucket } from '../../src/bus/kv.js';
import { ensureStream } from '../../src/bus/stream.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import type { NatsSecurity } from '../../src/config/nats.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { natsAuthConfig } from '../../src/security/nats-auth-config.js';
import { authUsers, type Credential } from '../../src/security/nats-permissions.js';
import { startTestNats, type TestNats } from './nats.js';
import { security } from './security.js';

/** A nats-server running the config `rezolus nats-auth` prints, and its admin's connection. */
export interface AuthNats {
  readonly server: TestNats;
  readonly configFile: string;
  /** rezolus-admin, connected */
  readonly admin: NatsConnection;
  /** a password user's credentials (with extra [nats] settings, e.g. an inbox prefix) */
  user(name: string, extra?: Partial<NatsSecurity>): NatsSecurity;
  password(name: string): string;
  /** the stream and both buckets, created as the admin (agents may not) */
  provision(): Promise<{ readonly descriptors: KV; readonly status: KV }>;
  /** closes the admin's connection, stops the server and removes its store */
  dispose(): Promise<void>;
}

/**
 * Starts nats-server with the shipped nats-auth output for `hosts` (config
 * written to `dir`): every user a random password, unless `credential`
 * gives it another (an nkey).
 */
export async function startAuthNats(dir: string, hosts: readonly string[], credential?: (name: string) => Credential | undefined): Promise<AuthNats> {
  const passwords = new Map<string, string>();
  const credentialOf = (name: string): Credential => {
    const given = credential?.(name);
    if (given !== undefined) return given;
    const password = `pw-${name}-${Math.random().toString(36).slice(2)}`;
    passwords.set(name, password);
    return { kind: 'password', password };
  };
  const configFile = join(dir, 'auth.conf');
  writeFileSync(configFile, natsAuthConfig(authUsers(hosts, 'REZOLUS', credentialOf), { account: 'REZOLUS', stream: 'REZOLUS' }));
  const server = await startTestNats(0, undefined, configFile);
  const password = (name: string): string => passwords.get(name) ?? '';
  const user = (name: string, extra: Partial<NatsSecurity> = {}): NatsSecurity => security({ user: name, password: password(name), ...extra });
  const admin = await connectBus({ url: server.url, name: 'test-admin', log: silentLogger(), security: user('rezolus-admin') });
  return {
    server,
    configFile,
    admin,
    user,
    password,
    async provision() {
      const defaults = loadAgentConfig(undefined, SAMPLER_NAMES);
      await ensureStream(await jetstreamManager(admin), defaults.stream, silentLogger());
      const descriptors = await descriptorBucket(admin, { ttlMs: defaults.descriptorTtlMs, replicas: 1 });
      const status = await statusBucket(admin, { ttlMs: 3_600_000, replicas: 1 });
      return { descriptors, status };
    },
    async dispose() {
      await admin.close().catch(() => undefined);
      await server.dispose();
    },
  };
}
