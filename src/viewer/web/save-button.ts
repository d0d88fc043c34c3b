/**
 * Live mode's "save this window": posts the hosts and time range on screen to
 * /api/v1/save (a hindsight file) and says where the file went, or why not.
 */
import type { SaveRequest, SaveResult } from '../api.js';
import { apiPost } from './api-client.js';
import { el } from './dom.js';
import { formatDuration } from './units.js';

export function saveButton(request: () => SaveRequest): HTMLElement {
  const button = el('button', { type: 'button', class: 'save', title: 'write the hosts and time range on screen to a Parquet file (hindsight)' }, 'save this window');
  const result = el('span', { class: 'save-result', role: 'status' });
  button.addEventListener('click', () => {
    const req = request();
    button.disabled = true;
    result.className = 'save-result muted';
    result.textContent = `saving ${req.hosts.length} host${req.hosts.length === 1 ? '' : 's'}, ${formatDuration(req.end - req.start)}…`;
    apiPost<SaveResult>('save', req)
      .then((r) => {
        result.className = 'save-result good';
        result.textContent = `saved ${r.rows} rows to ${r.path}`;
      })
      .catch((error: unknown) => {
        result.className = 'save-result bad';
        result.textContent = `not saved: ${error instanceof Error ? error.message : String(error)}`;
      })
      .finally(() => {
        button.disabled = false;
      });
  });
  return el('span', { class: 'save-box' }, button, result);
}
