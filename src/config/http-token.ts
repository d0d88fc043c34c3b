import { ConfigError } from '../errors.js';
import { isLoopback } from '../security/bearer.js';

export const HTTP_TOKEN_ENV = 'REZOLUS_HTTP_TOKEN';

/**
 * The bearer token of an HTTP endpoint that can trigger or reveal something
 * ([http] token, or REZOLUS_HTTP_TOKEN when set): '' for none. An endpoint
 * bound to anything but loopback must have one; `at` names the section.
 */
export function httpToken(listen: { host: string; port: number }, fileToken: string, at: string, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[HTTP_TOKEN_ENV];
  const token = fromEnv !== undefined && fromEnv !== '' ? fromEnv : fileToken;
  if (token !== '' && token.length < 16) throw new ConfigError(`${at} token (or ${HTTP_TOKEN_ENV}) must be at least 16 characters, got ${token.length}`);
  if (token === '' && !isLoopback(listen.host)) {
    throw new ConfigError(
      `${at} listen ${listen.host}:${listen.port} is reachable from other hosts: set [http] token (or ${HTTP_TOKEN_ENV}), or listen on 127.0.0.1`,
    );
  }
  return token;
}
