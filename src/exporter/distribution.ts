/**
 * A cumulative h2 histogram as a Prometheus histogram: `_bucket` lines with
 * the running count for every bucket from the first up to the highest
 * non-empty one (so the set of `le` series only grows during an agent run),
 * `le="+Inf"` equal to `_count`, and `_sum` as the sum of count × bucket
 * upper bound (an upper estimate, like every value the buckets report).
 */
import type { SparseHistogram } from '../metrics/histogram.js';
import { downsample, indexToRange } from '../metrics/histogram.js';
import type { Format } from './names.js';

/** `,le="<upper bound in the base unit>"} ` per bucket index, per unit and layout. */
const leCache = new Map<string, (string | undefined)[]>();

function leLabel(unit: string, format: Format, g: number, m: number, index: number): string {
  const key = `${unit}/${g}/${m}`;
  let labels = leCache.get(key);
  if (labels === undefined) {
    labels = [];
    leCache.set(key, labels);
  }
  let s = labels[index];
  if (s === undefined) {
    s = `,le="${format(indexToRange(index, g, m).upper) ?? '+Inf'}"} `;
    labels[index] = s;
  }
  return s;
}

/**
 * The sample lines of one histogram series and how many there are.
 * `family` is the family name, `labels` the `{host="h",k="v"` part.
 * `groupingPower` below the histogram's merges buckets first.
 */
export function distributionLines(
  family: string,
  labels: string,
  h: SparseHistogram,
  unit: string,
  format: Format,
  groupingPower: number,
): { text: string; lines: number } {
  const hist = groupingPower < h.groupingPower ? downsample(h, groupingPower) : h;
  const g = hist.groupingPower;
  const m = hist.maxValuePower;
  const bucket = `${family}_bucket${labels}`;
  const last = hist.index.length > 0 ? (hist.index[hist.index.length - 1] as number) : -1;
  let text = '';
  let cumulative = 0;
  let sum = 0n;
  let next = 0;
  for (let i = 0; i <= last; i++) {
    if (hist.index[next] === i) {
      const c = hist.count[next] as number;
      cumulative += c;
      sum += BigInt(c) * indexToRange(i, g, m).upper;
      next++;
    }
    text += `${bucket}${leLabel(unit, format, g, m, i)}${cumulative}\n`;
  }
  text += `${bucket},le="+Inf"} ${cumulative}\n`;
  text += `${family}_sum${labels}} ${format(sum) ?? '0'}\n`;
  text += `${family}_count${labels}} ${cumulative}\n`;
  return { text, lines: last + 4 };
}
