import { ConfigError } from '../errors.js';
import { isLoopback } from '../security/bearer.js';
import { envValue } from './env-value.js';

export const HTTP_TOKEN_ENV = 'REZOLUS_HTTP_TOKEN';

/**
 * The bearer token of an HTTP endpoint that can trigger or reveal something
 * ([http] token, or REZOLUS_HTTP_TOKEN when set): '' for none. An endpoint
 * bound to anything but loopback must have one; `at` names the section,
 * `listenFlag` the flag the address came from when it did not come from there.
 */
export function httpToken(
  listen: { host: string; port: number },
  fileToken: string,
  at: string,
  env: NodeJS.ProcessEnv = process.env,
  listenFlag?: string,
): string {
  // less one trailing line end, as the NATS credentials (a variable filled from a file)
  const fromEnv = envValue(env[HTTP_TOKEN_ENV] ?? '');
  const token = fromEnv !== '' ? fromEnv : fileToken;
  if (token !== '' && token.length < 16) throw new ConfigError(`${at} token (or ${HTTP_TOKEN_ENV}) must be at least 16 characters, got ${token.length}`);
  if (token === '' && !isLoopback(listen.host)) {
    // name where the address came from: the flag, or the file's section
    const where = listenFlag ?? `${at} listen`;
    const fix = listenFlag === undefined ? `set [http] token (or ${HTTP_TOKEN_ENV})` : `set ${HTTP_TOKEN_ENV} (or token in ${at})`;
    throw new ConfigError(`${where} ${listen.host}:${listen.port} is reachable from other hosts: ${fix}, or listen on 127.0.0.1`);
  }
  return token;
}
