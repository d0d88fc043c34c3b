import test from 'ava';
import { emptySkipStats } from '../../src/sources/checks.js';
import type { RecordSummary } from '../../src/record/main.js';
import { skippedText, summaryLine } from '../../src/record/summary.js';

const SUMMARY: RecordSummary = {
  output: 'out.parquet', rows: 900, columns: 42, hosts: ['web01', 'web02'], frames: 5400, bytes: 3 * 2 ** 20, written: true, skipped: emptySkipStats(),
};

test('the summary line has a skipped figure, 0 when nothing was left out', (t) => {
  t.is(summaryLine(SUMMARY), 'out.parquet: 900 rows, 42 series columns, hosts web01, web02, 5400 frames, 0 skipped, 3.0 MiB');
});

test('skipped messages by reason, in the order consumers check them, with the exporter\'s reason names', (t) => {
  const skipped = { ...emptySkipStats(), garbage: 2, wrongSubject: 10, outOfOrder: 1 };
  t.is(skippedText(skipped), '13 skipped (garbage 2, wrong_subject 10, out_of_order 1)');
  t.regex(summaryLine({ ...SUMMARY, skipped, rows: 1, frames: 1 }), /: 1 row, 42 series columns, hosts web01, web02, 1 frame, 13 skipped \(garbage 2, wrong_subject 10, out_of_order 1\), /);
  t.is(skippedText({ garbage: 1, unknownDescriptor: 2, invalid: 3, wrongSubject: 4, outOfOrder: 5 }), '15 skipped (garbage 1, wrong_subject 4, unknown_descriptor 2, invalid 3, out_of_order 5)');
});
