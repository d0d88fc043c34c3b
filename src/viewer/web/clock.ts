/** Wall-clock times for the header: local time, the date only when the range spans days. Pure. */
import { formatDuration } from './units.js';

const pad = (n: number, w = 2) => n.toString().padStart(w, '0');

/** "2026-07-13 14:05:09" (local time), or "14:05:09" without the date. */
export function formatClock(ms: number, withDate: boolean): string {
  const d = new Date(ms);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  return withDate ? `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}` : time;
}

/** "2026-07-13 14:00:00 – 14:15:00 (15 min)"; the end's date only when it is another day. */
export function formatRange(start: number, end: number): string {
  const a = new Date(start);
  const b = new Date(end);
  const sameDay = a.getFullYear() === b.getFullYear() && a.getMonth() === b.getMonth() && a.getDate() === b.getDate();
  return `${formatClock(start, true)} – ${formatClock(end, !sameDay)} (${formatDuration(end - start)})`;
}

/**
 * Time axis labels (uPlot splits in unix seconds, `incr` the tick spacing in
 * seconds): HH:MM, or HH:MM:SS when ticks are less than a minute apart; the
 * first tick and each tick on a new day also carry the date on a second line.
 */
export function timeTicks(splits: readonly number[], incr: number): string[] {
  let day = '';
  return splits.map((s) => {
    const d = new Date(s * 1000);
    const time = incr < 60 ? formatClock(s * 1000, false) : `${pad(d.getHours())}:${pad(d.getMinutes())}`;
    const date = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
    const label = date === day ? time : `${time}\n${date}`;
    day = date;
    return label;
  });
}
