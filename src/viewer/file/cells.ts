/**
 * Cells as hyparquet decodes them (for the chunks chunk.ts leaves to it),
 * as the Track holds them: counters (UINT64, decoded as bigint) and gauges
 * as numbers, NaN where the row has none; histograms' dense bucket lists as
 * sparse histograms (fromDense), undefined where the row has none. Pure.
 */
import { fromDense, type SparseHistogram } from '../../metrics/histogram.js';

/** A counter or gauge cell; NaN for null. Counters beyond 2^53 lose their low bits (as in every chart). */
export function scalarCell(cell: unknown): number {
  if (typeof cell === 'number') return cell;
  if (typeof cell === 'bigint') return Number(cell);
  return Number.NaN;
}

/**
 * A histogram cell (a dense list of bucket counts, cumulative since the
 * agent started); undefined for null. Throws RangeError for a list of the
 * wrong length or a count that is not a safe integer.
 */
export function histogramCell(cell: unknown, groupingPower: number, maxValuePower: number): SparseHistogram | undefined {
  if (cell === null || cell === undefined) return undefined;
  return fromDense(cell as ArrayLike<bigint | number>, groupingPower, maxValuePower);
}
