import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The bus contract, read from subjects/subjects.json (the same file SUBJECTS.md is generated from). */
export interface BusContract {
  readonly prefix: string;
  readonly stream: { readonly name: string; readonly subjects: readonly string[] };
  readonly kv: readonly { readonly bucket: string }[];
}

// src/bus and dist/bus are both two levels below the repository root.
const CONTRACT_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'subjects', 'subjects.json');

export const CONTRACT: BusContract = JSON.parse(readFileSync(CONTRACT_PATH, 'utf8')) as BusContract;

export const METRICS_PREFIX = `${CONTRACT.prefix}.metrics`;
export const DESCRIPTOR_BUCKET = 'rezolus_descriptors';
export const STATUS_BUCKET = 'rezolus_status';

/**
 * Makes a hostname one subject token: lower case, and every character
 * outside [a-z0-9_-] (dots included) becomes `_`.
 */
export function hostToken(hostname: string): string {
  const token = hostname.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
  return token === '' ? '_' : token;
}

const SAMPLER_NAME = /^[a-z][a-z0-9_]*$/;

export function metricsSubject(host: string, sampler: string): string {
  if (!SAMPLER_NAME.test(sampler)) throw new Error(`sampler name "${sampler}" is not a valid subject token`);
  return `${METRICS_PREFIX}.${hostToken(host)}.${sampler}`;
}

/**
 * Whether a frame naming `host` and `sampler` belongs on `subject`. A frame
 * is filed under the host it names, so one that names another host than its
 * subject (a misconfigured or hostile publisher) must not be used: it would
 * overwrite that host's values or bypass a host filter.
 */
export function subjectMatches(subject: string, host: string, sampler: string): boolean {
  return subject === `${METRICS_PREFIX}.${hostToken(host)}.${sampler}`;
}

/**
 * Subscription subjects for a host selection: `*` (or empty) for the whole
 * fleet, otherwise a comma-separated list of host names.
 */
export function hostFilterSubjects(pattern: string): string[] {
  const hosts = pattern
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
  if (hosts.length === 0 || hosts.includes('*')) return [`${METRICS_PREFIX}.*.>`];
  return [...new Set(hosts.map((h) => `${METRICS_PREFIX}.${hostToken(h)}.>`))];
}

/** The JetStream message id of a frame: globally unique because the instance id is random per agent run. */
export function frameMsgId(host: string, sampler: string, instance: number, seq: number): string {
  return `${hostToken(host)}.${sampler}.${instance.toString(16)}.${seq}`;
}
