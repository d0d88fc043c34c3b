/**
 * What a message on the hindsight control subject must be to start a dump:
 * a request from a client, with an empty body or a JSON object whose only
 * key is `output`. Anything else is refused, not dumped:
 * - a server answer that reached the subject as a redirected reply (a
 *   JetStream API response has `type`, a publish ack `stream` and `seq`, an
 *   error `error`; a pull status such as 404 has a status header);
 * - a stored message a push consumer delivers here (its reply is the
 *   consumer's `$JS.ACK.…`; where the import shares the requester's info, as
 *   in `rezolus nats-auth`'s layout, `Nats-Request-Info` says `JetStream`).
 */
import type { MsgHdrs } from '@nats-io/nats-core';
import { BadRequestError } from '../errors.js';

const KEYS = new Set(['output']);
/** who may ask: a client (directly or through a leaf node), never the server itself */
const CLIENT_KINDS = new Set(['Client', 'Leafnode']);

export interface ControlMessage {
  readonly data: Uint8Array;
  readonly reply?: string | undefined;
  readonly headers?: MsgHdrs | undefined;
}

function refuseServerMessages(msg: ControlMessage): void {
  const status = msg.headers?.code ?? 0;
  if (status !== 0) throw new BadRequestError(`not a dump request: a NATS status message (${status})`);
  if (msg.reply?.startsWith('$JS.ACK.') === true) throw new BadRequestError(`not a dump request: a message a JetStream consumer delivered (${msg.reply.split('.').slice(0, 4).join('.')}…)`);
  const info = msg.headers?.get('Nats-Request-Info') ?? '';
  if (info === '') return;
  let kind: unknown;
  try {
    kind = (JSON.parse(info) as { kind?: unknown }).kind;
  } catch {
    kind = undefined;
  }
  if (typeof kind === 'string' && !CLIENT_KINDS.has(kind)) throw new BadRequestError(`not a dump request: sent by the server (${kind}), not by a client`);
}

/** The request body to hand to the dump (undefined = the configured output). */
export function controlRequestBody(msg: ControlMessage): unknown {
  refuseServerMessages(msg);
  if (msg.data.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(msg.data)) as unknown;
  } catch (error) {
    throw new BadRequestError(`the request is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (body === null) throw new BadRequestError('not a dump request: null');
  if (typeof body !== 'object' || Array.isArray(body)) return body;
  const unknown = Object.keys(body).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) {
    throw new BadRequestError(`not a dump request: unknown key${unknown.length > 1 ? 's' : ''} ${unknown.slice(0, 4).join(', ')} (a dump request is {"output": "name.parquet"} or empty)`);
  }
  return body;
}
