/**
 * Flag values checked against the config schema's KeySpec of the key they
 * override (validateFlag), so a flag and its config key take the same values;
 * the messages name the flag.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LevelWithSilent } from 'pino';
import { logSection, natsSection, validateFlag, type KeySpec, type SectionSpec } from '../config/schema.js';
import type { Logger } from '../log/logger.js';
import type { Mode } from './help.js';
import type { Flags } from './mode.js';

// src/cli and dist/cli are both two levels below the repository root.
export const CONFIG_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'config');

/** Where the one-shot modes look for NATS when no URL is given. */
const DEFAULT_NATS = 'nats://127.0.0.1:4222';

/** A key of a config section; a missing one is a bug here, not a user error. */
export function keySpec(section: SectionSpec | undefined, key: string): KeySpec {
  const spec = section?.keys[key];
  if (spec === undefined) throw new Error(`the config schema has no key ${key}`);
  return spec;
}

const LOG_LEVEL = keySpec(logSection, 'level');
const NATS_URL = keySpec(natsSection, 'url');

/** The config file for a mode: --config, else config/<mode>.toml (or `file`) shipped with rezolus, else built-in defaults. */
export function configPath(mode: Mode, flags: Flags, file = `${mode}.toml`): string | undefined {
  if (flags.config !== undefined) return flags.config;
  const shipped = join(CONFIG_DIR, file);
  return existsSync(shipped) ? shipped : undefined;
}

/** A duration flag in ms, at least the key's minMs. */
export function durationFlag(spec: KeySpec, value: string | undefined, flag: string): number | undefined {
  return value === undefined ? undefined : (validateFlag(spec, value, flag) as number);
}

export function listenFlag(spec: KeySpec, value: string | undefined, flag: string): { host: string; port: number } | undefined {
  return value === undefined ? undefined : (validateFlag(spec, value, flag) as { host: string; port: number });
}

/** `*` or host names and globs, as given. */
export function hostsFlag(spec: KeySpec, value: string | undefined, flag: string): string | undefined {
  return value === undefined ? undefined : (validateFlag(spec, value, flag) as string);
}

export function levelFlag(value: string | undefined): LevelWithSilent | undefined {
  return value === undefined ? undefined : (validateFlag(LOG_LEVEL, value, '--log-level') as LevelWithSilent);
}

/** --nats, else REZOLUS_NATS_URL (empty = unset), else undefined. */
export function natsFlag(flags: Flags): string | undefined {
  const env = process.env.REZOLUS_NATS_URL;
  const [value, source] = flags.nats !== undefined ? [flags.nats, '--nats'] : [env, 'REZOLUS_NATS_URL'];
  if (value === undefined || (source === 'REZOLUS_NATS_URL' && value === '')) return undefined;
  return validateFlag(NATS_URL, value, source) as string;
}

/**
 * The NATS URL of a service (agent, exporter, hindsight) once its config is
 * loaded: the config's, unless nothing chose one (no --nats, no
 * REZOLUS_NATS_URL, and the config holds the default) and `rezolus up` runs
 * its private server from this directory: then that one, as the one-shot
 * modes do, rather than a server on 4222 that may be someone else's.
 */
export async function serviceNats(flags: Flags, configured: string, log: Logger): Promise<string> {
  if (natsFlag(flags) !== undefined || configured !== DEFAULT_NATS) return configured;
  const { privateServerUrl } = await import('../up/nats-server.js');
  const local = await privateServerUrl();
  if (local === undefined) return configured;
  log.info({ url: local }, 'no NATS URL given: using the private NATS server of rezolus up in this directory (./data/nats.url)');
  return local;
}

/**
 * The NATS URL of a one-shot mode: --nats or REZOLUS_NATS_URL; else the
 * private server `rezolus up` (npm start) runs from this directory
 * (./data/nats.url), when it answers; else DEFAULT_NATS.
 */
export async function oneShotNats(flags: Flags, log: Logger): Promise<{ url: string; how: 'given' | 'private' | 'default' }> {
  const given = natsFlag(flags);
  if (given !== undefined) return { url: given, how: 'given' };
  const { privateServerUrl } = await import('../up/nats-server.js');
  const local = await privateServerUrl();
  if (local === undefined) {
    log.info({ url: DEFAULT_NATS }, 'no NATS URL given and no ./data/nats.url here: using the default');
    return { url: DEFAULT_NATS, how: 'default' };
  }
  log.info({ url: local }, 'using the private NATS server of rezolus up (./data/nats.url)');
  return { url: local, how: 'private' };
}

