import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { NO_NATS_SECURITY, type NatsSecurity } from '../../src/config/nats.js';

export interface TestCerts {
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
}

/** A CA, a server certificate for IP:127.0.0.1 and a client certificate, made with openssl in `dir`. */
export function makeCerts(dir: string): TestCerts {
  const f = (name: string): string => join(dir, name);
  const openssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  };
  openssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '1', '-subj', '/CN=rezolus-test-ca');
  writeFileSync(f('san.ext'), 'subjectAltName=IP:127.0.0.1\n');
  for (const [name, ext] of [['server', true], ['client', false]] as const) {
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`), '-subj', `/CN=rezolus-test-${name}`);
    openssl('x509', '-req', '-in', f(`${name}.csr`), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial', '-out', f(`${name}.pem`), '-days', '1', ...(ext ? ['-extfile', f('san.ext')] : []));
  }
  return { ca: f('ca.pem'), serverCert: f('server.pem'), serverKey: f('server.key'), clientCert: f('client.pem'), clientKey: f('client.key') };
}

/** NatsSecurity with only the given fields set. */
export function security(s: Partial<NatsSecurity>): NatsSecurity {
  return { ...NO_NATS_SECURITY, ...s };
}

/** A logger that keeps its JSON lines, to assert what a process reported. */
export function capturingLogger(): { log: Logger; lines: { level: number; msg: string; [k: string]: unknown }[] } {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as { level: number; msg: string }) });
  return { log, lines };
}
