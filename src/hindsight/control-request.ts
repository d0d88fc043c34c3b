/**
 * What a message on the hindsight control subject must be to start a dump:
 * an empty body or a JSON object whose only key is `output`. Anything else is
 * refused, not dumped: a server answer that reached the subject as a
 * redirected reply (a JetStream API response has `type`, a publish ack
 * `stream` and `seq`, an error `error`; a pull status such as 404 has a
 * status header and no body) is not a dump request.
 */
import { BadRequestError } from '../errors.js';

const KEYS = new Set(['output']);

/**
 * The request body to hand to the dump (undefined = the configured output).
 * `status` is the NATS status code of the message (0 or undefined: none).
 */
export function controlRequestBody(data: Uint8Array, status: number | undefined): unknown {
  if (status !== undefined && status !== 0) throw new BadRequestError(`not a dump request: a NATS status message (${status})`);
  if (data.length === 0) return undefined;
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder().decode(data)) as unknown;
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
