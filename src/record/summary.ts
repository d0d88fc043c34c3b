/**
 * What `rezolus record` tells a terminal when it ends: the recording's
 * figures, and the messages it left out by reason (the names the exporter's
 * rezolus_exporter_frames_skipped_total{reason} uses).
 */
import { SKIP_REASONS, totalSkipped, type SkipStats } from '../sources/checks.js';
import { formatBytes } from '../config/units.js';
import type { RecordSummary } from './main.js';

/** `1 row`, `2 rows` */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** `0 skipped`, or `12 skipped (garbage 2, wrong_subject 10)`. */
export function skippedText(s: SkipStats): string {
  const n = totalSkipped(s);
  if (n === 0) return '0 skipped';
  return `${n} skipped (${SKIP_REASONS.filter(([k]) => s[k] > 0).map(([k, name]) => `${name} ${s[k]}`).join(', ')})`;
}

/** The one-line summary of a written recording. */
export function summaryLine(s: RecordSummary): string {
  return (
    `${s.output}: ${plural(s.rows, 'row')}, ${s.columns} series columns, hosts ${s.hosts.join(', ') || '(none)'}, ` +
    `${plural(s.frames, 'frame')}, ${skippedText(s.skipped)}, ${formatBytes(s.bytes)}`
  );
}
