import type { MetricDecl } from '../../../metrics/metric.js';
import { MetricKind } from '../../../metrics/metric.js';
import { parseU64 } from '../../../metrics/u64.js';
import { readText, requireSource } from '../../read.js';
import type { Labels, Point, Reading, Sampler, SamplerContext, SamplerDefinition } from '../../types.js';
import { NO_LABELS } from '../../types.js';
import * as m from './metrics.js';
import type { HeaderMemo, ProtocolBlock } from './parse.js';
import { parseProtocolBlocks } from './parse.js';

const NAME = 'network_protocols';
const SNMP = 'net/snmp';
const NETSTAT = 'net/netstat';

/** One curated field: where it is and which series it becomes. */
export interface FieldSpec {
  readonly protocol: string;
  readonly field: string;
  readonly metric: MetricDecl;
  readonly labels: Labels;
}

const RX: Labels = Object.freeze({ direction: 'receive' });
const TX: Labels = Object.freeze({ direction: 'transmit' });
const reason = (r: string): Labels => Object.freeze({ reason: r });

function specs(protocol: string, rows: readonly (readonly [string, MetricDecl, Labels?])[]): FieldSpec[] {
  return rows.map(([field, metric, labels]) => ({ protocol, field, metric, labels: labels ?? NO_LABELS }));
}

type UdpMetrics = readonly [MetricDecl, MetricDecl, MetricDecl, MetricDecl, MetricDecl, MetricDecl];

/** Udp and UdpLite share a layout: datagrams, no ports, errors, rcvbuf, sndbuf, checksum. */
function udpSpecs(protocol: string, [datagrams, noPorts, errors, rcvbuf, sndbuf, csum]: UdpMetrics): FieldSpec[] {
  return specs(protocol, [
    ['InDatagrams', datagrams, RX],
    ['OutDatagrams', datagrams, TX],
    ['NoPorts', noPorts],
    ['InErrors', errors],
    ['RcvbufErrors', rcvbuf],
    ['SndbufErrors', sndbuf],
    ['InCsumErrors', csum],
  ]);
}

/** Every field this sampler reads, in emission order within its protocol. */
export const FIELD_SPECS: readonly FieldSpec[] = [
  ...specs('Ip', [
    ['InReceives', m.networkIpPackets, RX],
    ['OutRequests', m.networkIpPackets, TX],
    ['InDelivers', m.networkIpDelivered],
    ['InDiscards', m.networkIpDiscards, RX],
    ['OutDiscards', m.networkIpDiscards, TX],
    ['InHdrErrors', m.networkIpHeaderErrors],
    ['InAddrErrors', m.networkIpAddressErrors],
    ['ForwDatagrams', m.networkIpForwarded],
    ['OutNoRoutes', m.networkIpNoRoutes],
    ['ReasmFails', m.networkIpReassemblyFailures],
    ['FragFails', m.networkIpFragmentationFailures],
  ]),
  ...specs('IpExt', [
    ['InOctets', m.networkIpBytes, RX],
    ['OutOctets', m.networkIpBytes, TX],
  ]),
  ...specs('Icmp', [
    ['InMsgs', m.networkIcmpMessages, RX],
    ['OutMsgs', m.networkIcmpMessages, TX],
    ['InErrors', m.networkIcmpReceiveErrors],
    ['InDestUnreachs', m.networkIcmpDestUnreachable, RX],
    ['OutDestUnreachs', m.networkIcmpDestUnreachable, TX],
  ]),
  ...specs('Tcp', [
    ['ActiveOpens', m.networkTcpActiveOpens],
    ['PassiveOpens', m.networkTcpPassiveOpens],
    ['AttemptFails', m.networkTcpAttemptFails],
    ['EstabResets', m.networkTcpEstablishedResets],
    ['CurrEstab', m.networkTcpEstablishedConnections],
    ['InSegs', m.networkTcpSegments, RX],
    ['OutSegs', m.networkTcpSegments, TX],
    ['RetransSegs', m.networkTcpRetransmittedSegments],
    ['InErrs', m.networkTcpReceiveErrors],
    ['OutRsts', m.networkTcpResetsSent],
    ['InCsumErrors', m.networkTcpChecksumErrors],
  ]),
  ...specs('TcpExt', [
    ['ListenOverflows', m.networkTcpListenOverflows],
    ['ListenDrops', m.networkTcpListenDrops],
    ['TCPTimeouts', m.networkTcpTimeouts],
    ['TCPSynRetrans', m.networkTcpSynRetransmits],
    ['TCPFastRetrans', m.networkTcpFastRetransmits],
    ['TCPLostRetransmit', m.networkTcpLostRetransmits],
    ['TCPSlowStartRetrans', m.networkTcpSlowStartRetransmits],
    ['TCPSpuriousRTOs', m.networkTcpSpuriousRtos],
    ['TCPLossProbes', m.networkTcpLossProbes],
    ['TCPAbortOnData', m.networkTcpAborts, reason('data')],
    ['TCPAbortOnClose', m.networkTcpAborts, reason('close')],
    ['TCPAbortOnMemory', m.networkTcpAborts, reason('memory')],
    ['TCPAbortOnTimeout', m.networkTcpAborts, reason('timeout')],
    ['TCPAbortOnLinger', m.networkTcpAborts, reason('linger')],
    ['SyncookiesSent', m.networkTcpSyncookies, TX],
    ['SyncookiesRecv', m.networkTcpSyncookies, RX],
    ['SyncookiesFailed', m.networkTcpSyncookiesFailed],
    ['TCPBacklogDrop', m.networkTcpBacklogDrops],
    ['PruneCalled', m.networkTcpReceiveQueuePrunes],
    ['TCPRcvQDrop', m.networkTcpReceiveQueueDrops],
    ['TCPOFODrop', m.networkTcpOutOfOrderDrops],
    ['TCPZeroWindowDrop', m.networkTcpZeroWindowDrops],
    ['TCPReqQFullDrop', m.networkTcpRequestQueueFullDrops],
    ['TCPMemoryPressures', m.networkTcpMemoryPressures],
  ]),
  ...udpSpecs('Udp', [
    m.networkUdpDatagrams, m.networkUdpNoPorts, m.networkUdpReceiveErrors,
    m.networkUdpReceiveBufferErrors, m.networkUdpSendBufferErrors, m.networkUdpChecksumErrors,
  ]),
  ...udpSpecs('UdpLite', [
    m.networkUdpliteDatagrams, m.networkUdpliteNoPorts, m.networkUdpliteReceiveErrors,
    m.networkUdpliteReceiveBufferErrors, m.networkUdpliteSendBufferErrors, m.networkUdpliteChecksumErrors,
  ]),
];

const SPECS_BY_PROTOCOL = new Map<string, FieldSpec[]>();
for (const s of FIELD_SPECS) {
  const list = SPECS_BY_PROTOCOL.get(s.protocol);
  if (list === undefined) SPECS_BY_PROTOCOL.set(s.protocol, [s]);
  else list.push(s);
}

/** Where the curated fields of one protocol sit in a given header layout. */
interface Plan {
  readonly header: string;
  readonly columns: readonly (readonly [number, FieldSpec])[];
}

function makePlan(block: ProtocolBlock, wanted: readonly FieldSpec[]): Plan {
  const columns: (readonly [number, FieldSpec])[] = [];
  for (const spec of wanted) {
    const i = block.fields.indexOf(spec.field);
    if (i >= 0) columns.push([i, spec]); // absent on this kernel: not emitted
  }
  return { header: block.header, columns };
}

/**
 * Turns parsed blocks into points, caching each protocol's column plan by its
 * header line. A curated value that is not a u64 is left out and counted.
 */
function collect(blocks: readonly ProtocolBlock[], plans: Map<string, Plan>, points: Point[]): number {
  let skipped = 0;
  for (const block of blocks) {
    const wanted = SPECS_BY_PROTOCOL.get(block.protocol);
    if (wanted === undefined) continue;
    let plan = plans.get(block.protocol);
    if (plan === undefined || plan.header !== block.header) {
      plan = makePlan(block, wanted);
      plans.set(block.protocol, plan);
    }
    for (const [i, spec] of plan.columns) {
      const v = parseU64(block.values[i] as string);
      if (v === undefined) {
        skipped++;
        continue;
      }
      const value = spec.metric.kind === MetricKind.Gauge ? Number(v) : v;
      points.push({ metric: spec.metric, labels: spec.labels, value });
    }
  }
  return skipped;
}

export const networkProtocolsSampler: SamplerDefinition = {
  name: NAME,
  description: 'Curated IPv4, ICMP, TCP, UDP and UDP-Lite counters from /proc/net/snmp and /proc/net/netstat.',
  metrics: m.METRICS,
  async init(ctx: SamplerContext): Promise<Sampler> {
    await requireSource(ctx.procRoot, SNMP);
    // TcpExt and IpExt live here; without it only the snmp counters are emitted
    const hasNetstat = await readText(ctx.procRoot, NETSTAT).then(
      () => true,
      () => false,
    );
    const plans = new Map<string, Plan>();
    const headers: HeaderMemo = new Map();
    return {
      name: NAME,
      metrics: m.METRICS,
      async refresh(): Promise<Reading> {
        const [snmp, netstat] = await Promise.all([
          readText(ctx.procRoot, SNMP),
          hasNetstat ? readText(ctx.procRoot, NETSTAT).catch(() => undefined) : undefined,
        ]);
        const points: Point[] = [];
        const a = parseProtocolBlocks(snmp, headers);
        let skipped = a.skipped + collect(a.blocks, plans, points);
        if (netstat !== undefined) {
          const b = parseProtocolBlocks(netstat, headers);
          skipped += b.skipped + collect(b.blocks, plans, points);
        } else if (hasNetstat) {
          skipped++; // netstat went away or failed: its blocks are missing
        }
        return { points, skipped };
      },
    };
  },
};
