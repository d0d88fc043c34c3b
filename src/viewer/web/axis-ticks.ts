/**
 * Which axis tick labels fit: pure helpers the uPlot axes call with the
 * plotting area in CSS pixels. Tested in test/viewer/web/axis-ticks.test.ts.
 */

/** the least room between two y labels (12 px text) */
export const Y_LABEL_GAP = 22;

const isDecade = (v: number) => v > 0 && Math.abs(Math.log10(v) - Math.round(Math.log10(v))) < 1e-9;

/**
 * The labels of a log axis whose splits are `splits`, `height` CSS pixels
 * tall: over more than one decade only powers of ten are labelled, every
 * k-th one (the same powers whatever the range) so that labels are at least
 * `gap` apart; within a decade every split keeps its label.
 */
export function logLabels(splits: readonly number[], labels: readonly string[], height: number, gap = Y_LABEL_GAP): string[] {
  const decades = splits.filter(isDecade);
  if (decades.length < 3) return [...labels];
  const span = Math.log10(Math.max(...decades)) - Math.log10(Math.min(...decades));
  // splits span the axis; decades are span / (count - 1) of its height apart at the least
  const room = height / Math.max(1, span);
  const every = Math.max(1, Math.ceil(gap / Math.max(1, room)));
  return splits.map((v, i) => (isDecade(v) && Math.round(Math.log10(v)) % every === 0 ? (labels[i] ?? '') : ''));
}

/** about the width of a character of the 12 px axis font (digits, ':', '-') */
export const CHAR_WIDTH = 7;

/**
 * The x labels that fit: a label centred at `pos[i]` (CSS pixels from the
 * plotting area's left) whose widest line would run past `right` (the
 * canvas's right edge, same pixels) is dropped rather than cut off.
 */
export function fitXLabels(labels: readonly string[], pos: readonly number[], right: number, charWidth = CHAR_WIDTH): string[] {
  return labels.map((l, i) => {
    const half = (Math.max(0, ...l.split('\n').map((s) => s.length)) * charWidth) / 2;
    const p = pos[i];
    return p !== undefined && p + half > right ? '' : l;
  });
}
