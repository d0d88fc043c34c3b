import test from 'ava';
import { escapeHelp, escapeLabelValue, familyName, isValidLabelName } from '../../src/exporter/names.js';

test('family names add the unit suffix and _total', (t) => {
  t.is(familyName('cpu_usage', 'counter', 'nanoseconds'), 'cpu_usage_seconds_total');
  t.is(familyName('memory_total', 'gauge', 'bytes'), 'memory_total_bytes');
  t.is(familyName('network_device_packets', 'counter', 'packets'), 'network_device_packets_total');
  t.is(familyName('scheduler_runqueue_latency', 'histogram', 'nanoseconds'), 'scheduler_runqueue_latency_seconds');
  t.is(familyName('cpu_frequency', 'gauge', 'count'), 'cpu_frequency');
  t.is(familyName('memory_utilization', 'gauge', 'ratio'), 'memory_utilization_ratio');
});

test('family names do not repeat a suffix the name already has', (t) => {
  t.is(familyName('network_bytes', 'counter', 'bytes'), 'network_bytes_total');
  t.is(familyName('rezolus_cpu_seconds', 'counter', 'microseconds'), 'rezolus_cpu_seconds_total');
  t.is(familyName('uptime_seconds', 'gauge', 'seconds'), 'uptime_seconds');
  t.is(familyName('exporter_frames_total', 'counter', 'count'), 'exporter_frames_total');
  t.is(familyName('busy_total', 'counter', 'nanoseconds'), 'busy_seconds_total');
  // only a whole `_<suffix>` token counts
  t.is(familyName('rx_microbytes', 'gauge', 'bytes'), 'rx_microbytes_bytes');
});

test('family names refuse bad names and unknown units', (t) => {
  t.is(familyName('bad-name', 'gauge', 'count'), undefined);
  t.is(familyName('1abc', 'gauge', 'count'), undefined);
  t.is(familyName('cpu{x="1"}', 'gauge', 'count'), undefined);
  t.is(familyName('cpu', 'gauge', 'furlongs'), undefined);
  t.is(familyName('cpu', 'gauge', '__proto__'), undefined);
  t.is(familyName('cpu', 'gauge', 'constructor'), undefined);
  t.is(familyName('_total', 'counter', 'count'), undefined);
});

test('label values escape backslash, double quote and newline', (t) => {
  t.is(escapeLabelValue('a"b\nc\\d'), 'a\\"b\\nc\\\\d');
  t.is(escapeLabelValue('plain value'), 'plain value');
  t.is(escapeLabelValue('tab\there'), 'tab\there');
  t.is(escapeHelp('one\\two\nthree "quoted"'), 'one\\\\two\\nthree "quoted"');
});

test('label names: valid, not reserved', (t) => {
  t.true(isValidLabelName('state'));
  t.true(isValidLabelName('_x1'));
  t.false(isValidLabelName('host'));
  t.false(isValidLabelName('percentile'));
  t.false(isValidLabelName('__name__'));
  t.false(isValidLabelName('a-b'));
  t.false(isValidLabelName('0a'));
  t.false(isValidLabelName(''));
});
