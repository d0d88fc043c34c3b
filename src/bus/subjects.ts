import { randomFillSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { instanceHex } from '../frame/types.js';

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
/** The stream that holds the window, unless configured otherwise ([stream] name, --stream). */
export const DEFAULT_STREAM = CONTRACT.stream.name;
export const DESCRIPTOR_BUCKET = 'rezolus_descriptors';
export const STATUS_BUCKET = 'rezolus_status';
/** Request/reply: a request here makes every hindsight service write a dump and reply with its result. */
export const HINDSIGHT_CONTROL_SUBJECT = `${CONTRACT.prefix}.control.hindsight.dump`;

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
 * The last token of the subject a bundle (frame/bundle.ts: the frames of one
 * tick in one message) travels on, `rezolus.metrics.<host>._bundle`. A
 * sampler name starts with a letter, so no sampler's subject is this one.
 */
export const BUNDLE_TOKEN = '_bundle';

/** The subject of a host's bundles. */
export function bundleSubject(host: string): string {
  return `${METRICS_PREFIX}.${hostToken(host)}.${BUNDLE_TOKEN}`;
}

/**
 * `rezolus.metrics.<host>.` of a bundle subject: a bundled frame counts as
 * if it had come on that prefix and its sampler.
 */
export function bundleHostPrefix(subject: string): string {
  return subject.slice(0, subject.length - BUNDLE_TOKEN.length);
}

/** Whether a frame subject carries bundles (its last token is BUNDLE_TOKEN). */
export function isBundleSubject(subject: string): boolean {
  return subject.endsWith(`.${BUNDLE_TOKEN}`);
}

/** The host token of a `rezolus.metrics.<host>.<sampler>` (or `.<host>._bundle`) subject. */
export function subjectHostToken(subject: string): string {
  const at = METRICS_PREFIX.length + 1;
  return subject.slice(at, subject.indexOf('.', at));
}

/**
 * Whether a frame naming `host` and `sampler` belongs on `subject`. A frame
 * is filed under the host it names, so one that names another host than its
 * subject (a misconfigured or hostile publisher) must not be used: it would
 * overwrite that host's values or bypass a host filter. The host must be
 * the subject's host token exactly, not a name that makes that token: a
 * frame with `h: "H5"` on `rezolus.metrics.h5.…` would otherwise be keyed,
 * labelled and recorded as another host `H5` that its publisher invented.
 * (The agent publishes its host token as `h`.) The host must also be a
 * token and the sampler a name, so that the two cannot split the subject
 * another way (`h: "a.b"`, `s: "c"` on `rezolus.metrics.a.b.c`).
 */
export function subjectMatches(subject: string, host: string, sampler: string): boolean {
  return host === hostToken(host) && SAMPLER_NAME.test(sampler) && subject === `${METRICS_PREFIX}.${host}.${sampler}`;
}

function hostEntries(pattern: string): string[] {
  return pattern
    .split(',')
    .map((h) => h.trim())
    .filter((h) => h !== '');
}

/**
 * A test on host tokens for a host selection (`*`, names and globs), for a
 * consumer that receives every host's messages and picks (alert events and
 * records): names are matched as tokens, so `DB-01` selects `db-01`.
 */
export function hostMatcher(pattern: string): (token: string) => boolean {
  const entries = hostEntries(pattern);
  if (entries.length === 0 || entries.includes('*')) return () => true;
  const glob = hostSelector(pattern);
  if (glob !== undefined) return glob;
  const names = new Set(entries.map(hostToken));
  return (token) => names.has(token);
}

function isGlob(entry: string): boolean {
  return entry !== '*' && entry.includes('*');
}

/**
 * Subscription subjects for a host selection: `*` (or empty) for the whole
 * fleet, otherwise a comma-separated list of host names and globs
 * (`web-*`). A glob cannot be a subject filter (NATS wildcards are whole
 * tokens), so a selection with one subscribes to the fleet and hostSelector
 * picks the hosts.
 */
export function hostFilterSubjects(pattern: string): string[] {
  const hosts = hostEntries(pattern);
  if (hosts.length === 0 || hosts.some((h) => h === '*' || isGlob(h))) return [`${METRICS_PREFIX}.*.>`];
  return [...new Set(hosts.map((h) => `${METRICS_PREFIX}.${hostToken(h)}.>`))];
}

/**
 * The host tokens a selection with globs accepts, or undefined when its
 * subjects already select exactly (the fleet, or plain names). A glob is
 * matched against host tokens, so `Web-*.example.com` selects
 * `web-01_example_com`.
 */
export function hostSelector(pattern: string): ((token: string) => boolean) | undefined {
  const hosts = hostEntries(pattern);
  if (hosts.length === 0 || hosts.includes('*') || !hosts.some(isGlob)) return undefined;
  const alternatives = hosts.map((h) =>
    h
      .split('*')
      .map((piece) => (piece === '' ? '' : hostToken(piece))) // tokens hold only [a-z0-9_-]: no regex escaping
      .join('[a-z0-9_-]*'),
  );
  const re = new RegExp(`^(?:${alternatives.join('|')})$`);
  return (token) => re.test(token);
}

/**
 * The descriptor bucket key an agent puts a descriptor under: its host
 * token, then the hash. Per host, so that a host's credentials can put only
 * its own descriptors (an agent may write `<its host>.*` and nothing else
 * of the bucket); consumers look a frame's descriptor up under the frame's
 * host and, for agents from before this layout, under the bare hash.
 */
export function descriptorKey(host: string, hash: string): string {
  return `${hostToken(host)}.${hash}`;
}

/** The inbox prefix of a host's agent (its default [nats] inbox_prefix): a per-host user may subscribe there and nowhere else. */
export function agentInboxPrefix(host: string): string {
  return `_INBOX_${hostToken(host)}`;
}

/** A frame's message id before its tag (taggedMsgId): unique because the instance id is random per agent run. */
export function frameMsgId(host: string, sampler: string, instance: number, seq: number): string {
  return `${frameMsgIdPrefix(host, sampler, instance)}${seq}`;
}

/**
 * The Nats-Msg-Id a frame is published with: frameMsgId, then a tag of 16
 * random hex digits (MsgIdTags) drawn when the frame is queued. JetStream
 * deduplicates ids across the whole stream, and any user that may publish to
 * it learns the newest stored id (a publish with a wrong
 * `Nats-Expected-Last-Msg-Id` is refused with "wrong last msg ID: <id>").
 * With ids that follow from one another, a host could publish under another
 * host's next ids on its own subjects, and that host's frames would be acked
 * as duplicates and never stored. The queued frame keeps its tag, so every
 * retry carries the same id and a retry is still stored once.
 */
export function taggedMsgId(idPrefix: string, seq: number, tag: string): string {
  return `${idPrefix}${seq}.${tag}`;
}

/**
 * Tags for taggedMsgId: 8 bytes of the CSPRNG each, as hex, cut from a pool
 * filled 4 KiB at a time. An HMAC of the id per frame (what this replaced)
 * cost 8-13 µs per frame at one tick a second, 0.2-0.3 ms a tick for 25
 * frames; a tag from the pool costs well under 1 µs.
 */
export class MsgIdTags {
  readonly #pool = Buffer.allocUnsafe(4096);
  #at = this.#pool.length;

  next(): string {
    if (this.#at === this.#pool.length) {
      randomFillSync(this.#pool);
      this.#at = 0;
    }
    const tag = this.#pool.toString('hex', this.#at, this.#at + 8);
    this.#at += 8;
    return tag;
  }
}

/** The Nats-Msg-Id prefix of a run's bundles (then the bundle's seq and tag, taggedMsgId). */
export function bundleMsgIdPrefix(host: string, instance: number): string {
  return `${hostToken(host)}.${BUNDLE_TOKEN}.${instanceHex(instance)}.`;
}

/** frameMsgId without the seq: one string per sampler run, so a buffered frame keeps only its seq. */
export function frameMsgIdPrefix(host: string, sampler: string, instance: number): string {
  return `${hostToken(host)}.${sampler}.${instanceHex(instance)}.`;
}
