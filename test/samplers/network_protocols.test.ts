import test from 'ava';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEADER_MEMO_MAX, parseProtocolBlocks, type HeaderMemo } from '../../src/samplers/network/protocols/parse.js';
import { FIELD_SPECS, networkProtocolsSampler } from '../../src/samplers/network/protocols/sampler.js';
import type { Point } from '../../src/samplers/types.js';
import { SamplerUnsupportedError } from '../../src/samplers/types.js';
import { silentLogger } from '../../src/log/logger.js';
import { FIXTURE_ROOT, fixture, PROC, SYS } from '../helpers/fixtures.js';

const BAD = join(FIXTURE_ROOT, 'bad', 'network_protocols');

type Labels = Record<string, string>;

/** The value of the point of `name` whose labels are exactly `labels`. */
function value(points: readonly Point[], name: string, labels: Labels = {}): Point['value'] | undefined {
  const keys = Object.keys(labels);
  return points.find(
    (p) =>
      p.metric.name === name &&
      Object.keys(p.labels).length === keys.length &&
      keys.every((k) => p.labels[k] === labels[k]),
  )?.value;
}

function field(text: string, protocol: string, name: string): string | undefined {
  const block = parseProtocolBlocks(text).blocks.find((b) => b.protocol === protocol);
  if (block === undefined) return undefined;
  return block.values[block.fields.indexOf(name)];
}

test('parseProtocolBlocks pairs every header with its values in the fixtures', (t) => {
  const snmp = parseProtocolBlocks(fixture('rootfs/proc/net/snmp'));
  t.is(snmp.skipped, 0);
  t.deepEqual(
    snmp.blocks.map((b) => b.protocol),
    ['Ip', 'Icmp', 'IcmpMsg', 'Tcp', 'Udp', 'UdpLite'],
  );
  const netstat = parseProtocolBlocks(fixture('rootfs/proc/net/netstat'));
  t.is(netstat.skipped, 0);
  t.deepEqual(
    netstat.blocks.map((b) => b.protocol),
    ['TcpExt', 'IpExt', 'MPTcpExt'],
  );
  const text = fixture('rootfs/proc/net/snmp');
  t.is(field(text, 'Tcp', 'ActiveOpens'), '98');
  t.is(field(text, 'Tcp', 'RetransSegs'), '0');
  t.is(field(text, 'Tcp', 'MaxConn'), '-1'); // signed: values stay raw text in the parse
  t.is(field(fixture('rootfs/proc/net/netstat'), 'TcpExt', 'TCPAbortOnData'), '37');
});

test('parseProtocolBlocks skips a block whose value count differs from its header', (t) => {
  const { blocks, skipped } = parseProtocolBlocks(fixture('bad/network_protocols/net/snmp'));
  t.is(skipped, 1);
  t.deepEqual(
    blocks.map((b) => b.protocol),
    ['Ip', 'Icmp', 'Udp', 'UdpLite'],
  );
});

test('parseProtocolBlocks resynchronises after a missing or stray line, never throws', (t) => {
  const text = ['Tcp: A B', 'Udp: X Y', 'Udp: 1 2', 'garbage', 'Ip: P', 'Ip: 7', 'IpExt: Q R'].join('\n');
  const { blocks, skipped } = parseProtocolBlocks(text);
  t.is(skipped, 3); // Tcp header without values, the colon-less line, IpExt header at the end
  t.deepEqual(
    blocks.map((b) => [b.protocol, b.values]),
    [
      ['Udp', ['1', '2']],
      ['Ip', ['7']],
    ],
  );
  t.deepEqual(parseProtocolBlocks(''), { blocks: [], skipped: 0 });
  t.notThrows(() => parseProtocolBlocks(':\n:::\n\u0000: :'));
});

test('parseProtocolBlocks gives the same with headers kept from read to read as without', (t) => {
  const snmp = fixture('rootfs/proc/net/snmp');
  const netstat = fixture('rootfs/proc/net/netstat');
  const reads = [
    snmp,
    netstat,
    snmp,
    snmp.replace('Tcp: RtoAlgorithm', 'Tcp: RtoAlgorithmX'), // a header changed
    snmp.replace(/^Tcp: RtoAlgorithm RtoMin/m, 'Tcp: RtoMin'), // a field gone: its values no longer match
    fixture('bad/network_protocols/net/snmp'),
    ['Tcp: A B', 'Udp: X Y', 'Udp: 1 2', 'garbage', 'Ip: P', 'Ip: 7', 'IpExt: Q R'].join('\n'),
    snmp,
    netstat,
  ];
  const memo: HeaderMemo = new Map();
  for (const [i, text] of reads.entries()) t.deepEqual(parseProtocolBlocks(text, memo), parseProtocolBlocks(text), `read ${i}`);
  // a header seen again is split once: the fields are the kept array
  const again = parseProtocolBlocks(snmp, memo).blocks.find((b) => b.protocol === 'Tcp');
  t.is(again?.fields, memo.get('Tcp')?.fields);
  // bounded: more protocols than it holds start it again
  const many = Array.from({ length: HEADER_MEMO_MAX + 5 }, (_, i) => `P${i}: a b\nP${i}: 1 2`).join('\n');
  t.is(parseProtocolBlocks(many, memo).blocks.length, HEADER_MEMO_MAX + 5);
  t.true(memo.size <= HEADER_MEMO_MAX);
});

test('network_protocols reads RetransSegs, u64 beyond 2^53, and works without netstat', async (t) => {
  const root = await mkdtemp(join(tmpdir(), 'snmp-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  await mkdir(join(root, 'net'));
  const text = 'Tcp: MaxConn ActiveOpens RetransSegs CurrEstab\nTcp: -1 18446744073709551615 1234 7\n';
  t.is(field(text, 'Tcp', 'RetransSegs'), '1234');
  await writeFile(join(root, 'net', 'snmp'), text);
  const s = await networkProtocolsSampler.init({ procRoot: root, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 3); // MaxConn is not curated; other Tcp fields are absent here
  t.is(value(r.points, 'network_tcp_retransmitted_segments'), 1234);
  t.is(value(r.points, 'network_tcp_active_opens'), 18446744073709551615n);
  t.is(value(r.points, 'network_tcp_established_connections'), 7);
});

test('network_protocols refresh reads the fixture root', async (t) => {
  const s = await networkProtocolsSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.is(r.points.length, 67); // every curated field exists on the fixture kernel
  t.is(r.points.length, FIELD_SPECS.length);
  t.is(value(r.points, 'network_tcp_active_opens'), 98);
  t.is(value(r.points, 'network_tcp_passive_opens'), 42);
  t.is(value(r.points, 'network_tcp_attempt_fails'), 11);
  t.is(value(r.points, 'network_tcp_established_resets'), 5);
  t.is(value(r.points, 'network_tcp_established_connections'), 2);
  t.is(value(r.points, 'network_tcp_segments', { direction: 'receive' }), 3614);
  t.is(value(r.points, 'network_tcp_segments', { direction: 'transmit' }), 2800);
  t.is(value(r.points, 'network_tcp_retransmitted_segments'), 0);
  t.is(value(r.points, 'network_tcp_resets_sent'), 80);
  t.is(value(r.points, 'network_tcp_timeouts'), 2);
  t.is(value(r.points, 'network_tcp_aborts', { reason: 'data' }), 37);
  t.is(value(r.points, 'network_tcp_aborts', { reason: 'timeout' }), 0);
  t.is(value(r.points, 'network_udp_datagrams', { direction: 'receive' }), 41);
  t.is(value(r.points, 'network_udp_datagrams', { direction: 'transmit' }), 42);
  t.is(value(r.points, 'network_udplite_datagrams', { direction: 'receive' }), 0);
  t.is(value(r.points, 'network_ip_packets', { direction: 'receive' }), 3656);
  t.is(value(r.points, 'network_ip_packets', { direction: 'transmit' }), 2841);
  t.is(value(r.points, 'network_ip_delivered'), 3656);
  t.is(value(r.points, 'network_ip_bytes', { direction: 'receive' }), 86625938);
  t.is(value(r.points, 'network_icmp_messages', { direction: 'receive' }), 1);
  t.is(value(r.points, 'network_icmp_dest_unreachable', { direction: 'receive' }), 1);
  for (const p of r.points) t.true(s.metrics.includes(p.metric));
  const gauges = r.points.filter((p) => p.metric.kind === 'gauge');
  t.deepEqual(
    gauges.map((p) => p.metric.name),
    ['network_tcp_established_connections'],
  );
});

test('network_protocols declares every metric it can emit, and emits each declared one', (t) => {
  const emitted = new Set(FIELD_SPECS.map((f) => f.metric));
  t.is(emitted.size, networkProtocolsSampler.metrics.length);
  for (const metric of networkProtocolsSampler.metrics) t.true(emitted.has(metric), metric.name);
  const series = new Set(FIELD_SPECS.map((f) => `${f.metric.name}${JSON.stringify(f.labels)}`));
  t.is(series.size, FIELD_SPECS.length); // no two fields map to the same series
});

test('network_protocols keeps the layout and label objects across refreshes', async (t) => {
  const s = await networkProtocolsSampler.init({ procRoot: PROC, sysRoot: SYS, log: silentLogger() });
  const a = await s.refresh();
  const b = await s.refresh();
  t.is(a.points.length, b.points.length);
  a.points.forEach((p, i) => {
    t.is(b.points[i]?.metric, p.metric);
    t.is(b.points[i]?.labels, p.labels);
  });
});

test('network_protocols refresh on bad input keeps the good blocks', async (t) => {
  const s = await networkProtocolsSampler.init({ procRoot: BAD, sysRoot: SYS, log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 2); // the mismatched Tcp block, the garbage TCPAbortOnData value
  t.is(r.points.length, 11 + 5 + 7 + 7 + 8 + 2);
  const tcpMetrics = new Set(FIELD_SPECS.filter((f) => f.protocol === 'Tcp').map((f) => f.metric));
  t.false(r.points.some((p) => tcpMetrics.has(p.metric)));
  t.is(value(r.points, 'network_tcp_segments', { direction: 'receive' }), undefined);
  t.is(value(r.points, 'network_tcp_aborts', { reason: 'data' }), undefined);
  t.is(value(r.points, 'network_tcp_aborts', { reason: 'timeout' }), 9);
  t.is(value(r.points, 'network_tcp_syncookies', { direction: 'transmit' }), 1);
  t.is(value(r.points, 'network_tcp_syncookies', { direction: 'receive' }), 2);
  t.is(value(r.points, 'network_tcp_syncookies_failed'), 3);
  t.is(value(r.points, 'network_tcp_listen_overflows'), 4);
  t.is(value(r.points, 'network_tcp_listen_drops'), 5);
  t.is(value(r.points, 'network_tcp_syn_retransmits'), 7);
  t.is(value(r.points, 'network_tcp_fast_retransmits'), undefined); // absent from this header: not emitted
  t.is(value(r.points, 'network_ip_bytes', { direction: 'receive' }), 18446744073709551615n);
  t.is(value(r.points, 'network_ip_header_errors'), 1);
  t.is(value(r.points, 'network_ip_address_errors'), 2);
  t.is(value(r.points, 'network_ip_discards', { direction: 'receive' }), 3);
  t.is(value(r.points, 'network_ip_discards', { direction: 'transmit' }), 4);
  t.is(value(r.points, 'network_ip_no_routes'), 5);
  t.is(value(r.points, 'network_ip_reassembly_failures'), 6);
  t.is(value(r.points, 'network_ip_fragmentation_failures'), 7);
  t.is(value(r.points, 'network_udp_no_ports'), 3);
  t.is(value(r.points, 'network_udp_receive_errors'), 4);
  t.is(value(r.points, 'network_udp_receive_buffer_errors'), 1);
  t.is(value(r.points, 'network_udp_send_buffer_errors'), 2);
});

test('network_protocols is unsupported without /proc/net/snmp', async (t) => {
  await t.throwsAsync(networkProtocolsSampler.init({ procRoot: '/nonexistent', sysRoot: SYS, log: silentLogger() }), {
    instanceOf: SamplerUnsupportedError,
  });
});

test('network_protocols reads the live /proc', async (t) => {
  const s = await networkProtocolsSampler.init({ procRoot: '/proc', sysRoot: '/sys', log: silentLogger() });
  const r = await s.refresh();
  t.is(r.skipped, 0);
  t.true(r.points.length > 0);
  t.not(value(r.points, 'network_tcp_segments', { direction: 'receive' }), undefined);
});
