/**
 * The page's calls to /api/v1 (types in ../api.ts). A failed call throws
 * ApiFailure with one line a person can read: what was asked and the
 * server's `{error}`. An aborted call (the page was left) throws AbortError,
 * which callers ignore.
 */
import type { ApiError } from '../api.js';

export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = 'ApiFailure';
  }
}

export type Params = Readonly<Record<string, string | number | readonly string[] | undefined>>;

/** `/api/v1/<path>?k=v&…`; arrays repeat their key (match=a&match=b). */
export function apiUrl(path: string, params: Params = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (typeof v === 'string' || typeof v === 'number') q.append(k, String(v));
    else for (const item of v) q.append(k, item);
  }
  const tail = q.toString();
  return `api/v1/${path}${tail === '' ? '' : `?${tail}`}`;
}

export function isAbort(error: unknown): boolean {
  return error instanceof DOMException && error.name === 'AbortError';
}

async function call<T>(what: string, url: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (error) {
    if (isAbort(error)) throw error;
    throw new ApiFailure(`${what}: the viewer server does not answer (${error instanceof Error ? error.message : String(error)})`, 0);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const message = (body as Partial<ApiError> | undefined)?.error ?? (text.trim().slice(0, 200) || res.statusText);
    throw new ApiFailure(`${what}: ${message} (HTTP ${res.status})`, res.status);
  }
  if (body === undefined) throw new ApiFailure(`${what}: the answer is not JSON`, res.status);
  return body as T;
}

export function apiGet<T>(path: string, params: Params, signal?: AbortSignal): Promise<T> {
  return call<T>(`GET /api/v1/${path}`, apiUrl(path, params), { signal: signal ?? null, headers: { accept: 'application/json' } });
}

export function apiPost<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T> {
  return call<T>(`POST /api/v1/${path}`, apiUrl(path), {
    method: 'POST',
    signal: signal ?? null,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(body),
  });
}
