import test from 'ava';
import { fitXLabels, logLabels } from '../../../src/viewer/web/axis-ticks.js';

const decades = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => 10 ** (lo + i));

test('a log axis over 11 decades in 115 px labels every other power of ten or fewer, never two closer than the gap', (t) => {
  const splits = decades(-7, 3);
  const labels = splits.map((v) => String(v));
  const out = logLabels(splits, labels, 115);
  const shown = out.filter((l) => l !== '');
  t.true(shown.length >= 2 && shown.length <= 6, out.join(','));
  // the gap between labelled decades in pixels
  const idx = out.flatMap((l, i) => (l === '' ? [] : [i]));
  const px = 115 / 10;
  for (let i = 1; i < idx.length; i++) t.true(((idx[i] ?? 0) - (idx[i - 1] ?? 0)) * px >= 22);
  // tall enough: every decade
  t.deepEqual(logLabels(splits, labels, 400), labels);
});

test('a log axis: minor splits lose their labels over decades, keep them within one', (t) => {
  t.deepEqual(logLabels([1, 2, 5, 10, 20, 50, 100], ['1', '2', '5', '10', '20', '50', '100'], 300), ['1', '', '', '10', '', '', '100']);
  t.deepEqual(logLabels([1, 2, 5, 10], ['1', '2', '5', '10'], 100), ['1', '2', '5', '10']);
});

test('an x label that would run past the right edge is dropped', (t) => {
  t.deepEqual(fitXLabels(['23:04:20', '23:04:40'], [100, 490], 500), ['23:04:20', '']);
  t.deepEqual(fitXLabels(['23:04:20', '23:04:40'], [100, 470], 500), ['23:04:20', '23:04:40']);
  // the widest line of a two-line label counts
  t.deepEqual(fitXLabels(['00:00\n2025-01-01'], [470], 500), ['']);
});
