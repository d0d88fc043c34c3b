import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { AuthorizationError, nkeyAuthenticator, TimeoutError, type ConnectionOptions } from '@nats-io/nats-core';
import { readNkeySeed, type NatsSecurity } from '../config/nats.js';
import { findCause, isServerWithoutTls } from './api-errors.js';

/** Host names of a server list (`tls://10.0.0.1:4222,nats://b:4222` -> 10.0.0.1, b). */
function serverHosts(servers: readonly string[]): string[] {
  return servers.map((s) => {
    try {
      return new URL(s.includes('://') ? s : `nats://${s}`).hostname.replace(/^\[|\]$/g, '');
    } catch {
      return s;
    }
  });
}

/**
 * The client checks the server certificate against "localhost" when the URL
 * names an IP address (nats-core passes no servername for IPs; measured with
 * a certificate for IP:127.0.0.1 only). Check it against the configured
 * hosts in that case, so a certificate with the server's IP works.
 */
function identityCheck(hosts: readonly string[]): (host: string, cert: PeerCertificate) => Error | undefined {
  return (host, cert) => {
    if (host === 'localhost' && hosts.some((h) => checkServerIdentity(h, cert) === undefined)) return undefined;
    return checkServerIdentity(host, cert);
  };
}

/** nats-core connection options for user/password or nkey auth, TLS and the inbox prefix. */
export function securityOptions(s: NatsSecurity, servers: readonly string[]): Partial<ConnectionOptions> {
  const o: Partial<ConnectionOptions> = {};
  if (s.user !== '') Object.assign(o, { user: s.user, pass: s.password });
  if (s.nkeySeedFile !== '') o.authenticator = nkeyAuthenticator(readNkeySeed(s.nkeySeedFile, `[nats] nkey_seed_file ${s.nkeySeedFile}`));
  const tlsUrl = servers.some((u) => u.startsWith('tls://'));
  if (s.tlsCa !== '' || s.tlsCert !== '' || tlsUrl) {
    o.tls = {
      ...(s.tlsCa !== '' ? { caFile: s.tlsCa } : {}),
      ...(s.tlsCert !== '' ? { certFile: s.tlsCert, keyFile: s.tlsKey } : {}),
      // passed through to node:tls
      ...({ checkServerIdentity: identityCheck(serverHosts(servers)) } as object),
    };
  }
  if (s.inboxPrefix !== '') o.inboxPrefix = s.inboxPrefix;
  return o;
}

/**
 * The Node system or TLS error code (ECONNREFUSED, UNABLE_TO_VERIFY_LEAF_SIGNATURE, ...) in the chain of
 * causes: the client wraps a socket's error in a ConnectionError (or passes a TLS error on as it is).
 */
function systemCode(error: unknown): string {
  let e = error;
  for (let i = 0; i < 8 && e !== null && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return '';
}

/** Node's codes of a TLS certificate that does not verify (node:tls, openssl X509 errors). */
const UNTRUSTED_CERT = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/;

/** A one-line explanation of a failed connect, with the config key that fixes it. */
export function explainConnectError(error: unknown, s: NatsSecurity): string {
  const e = error as { name?: string; message?: string };
  const text = `${e.name ?? 'Error'}: ${e.message ?? String(error)}`;
  if (findCause(error, AuthorizationError) !== undefined) {
    const who = s.user !== '' ? `user "${s.user}"` : s.nkeySeedFile !== '' ? `the nkey in ${s.nkeySeedFile}` : 'no credentials';
    return `the server refused ${who} (${text}): check [nats] user/password or nkey_seed_file (or REZOLUS_NATS_USER/_PASSWORD/_NKEY_SEED_FILE)`;
  }
  if (UNTRUSTED_CERT.test(systemCode(error))) {
    return `the server's TLS certificate is not trusted (${text}): set [nats] tls_ca (or REZOLUS_NATS_TLS_CA) to the CA that signed it`;
  }
  if (isServerWithoutTls(error)) return `${text}: this server has no TLS; remove [nats] tls_ca/tls_cert (REZOLUS_NATS_TLS_CA/_TLS_CERT) or use its TLS port`;
  if (findCause(error, TimeoutError) !== undefined) {
    return `${text} (the port accepted the connection but no NATS greeting came in time: a hung or overloaded server, something else than NATS on that port, or a server with tls { verify: true }, which drops clients without a certificate: then set [nats] tls_cert and tls_key, or REZOLUS_NATS_TLS_CERT and _TLS_KEY)`;
  }
  return text;
}

/** System errors of a first connect worth waiting out (the server is not up yet). */
const TRANSIENT_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT']);

/**
 * Errors of a first connect worth waiting out (the server is not up yet); the rest are configuration.
 * A refused connect comes as ConnectionError("connection refused") with the socket's ECONNREFUSED as
 * its cause (transport-node node_transport.js).
 */
export function isTransient(error: unknown): boolean {
  return TRANSIENT_CODES.has(systemCode(error));
}
