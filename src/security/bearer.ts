import { createHash, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';

/** Whether a listen host is reachable from this machine only (127.0.0.0/8, ::1, localhost). */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h === '::1' || h === '0:0:0:0:0:0:0:1') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return /^::ffff:127\./.test(h);
}

/**
 * Whether an Authorization header carries `Bearer <token>`. Compared in
 * constant time over SHA-256 digests, so neither the token's content nor its
 * length leaks through the response time.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer +(\S+) *$/i.exec(header ?? '');
  const given = createHash('sha256').update(m?.[1] ?? '').digest();
  const wanted = createHash('sha256').update(token).digest();
  return timingSafeEqual(given, wanted) && m !== null;
}
