/**
 * The one error line under the header: the latest API failure, in words.
 * Each part of the page reports under its own key and clears it when it
 * works again, so a live page recovers by itself.
 */
import { isAbort } from './api-client.js';
import { byId } from './dom.js';

const errors = new Map<string, string>();

function render(): void {
  const line = byId('error');
  const last = [...errors.values()].pop();
  line.hidden = last === undefined;
  line.textContent = last ?? '';
  line.title = errors.size > 1 ? [...errors.values()].join('\n') : '';
}

/** Shows `error` (an ApiFailure or anything) under `key`; aborted requests are not errors. */
export function reportError(key: string, error: unknown): void {
  if (isAbort(error)) return;
  const text = error instanceof Error ? error.message : String(error);
  errors.delete(key);
  errors.set(key, text);
  render();
}

export function clearError(key: string): void {
  if (errors.delete(key)) render();
}

/** Clears every error whose key starts with `prefix` (a page being left). */
export function clearErrors(prefix: string): void {
  let changed = false;
  for (const k of [...errors.keys()]) if (k.startsWith(prefix)) changed = errors.delete(k) || changed;
  if (changed) render();
}
