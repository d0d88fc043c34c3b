import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

// Curated counters of /proc/net/snmp and /proc/net/netstat; each description
// names its source as <protocol>.<field>. Fields a kernel lacks are not emitted.
const COUNTER = MetricKind.Counter;
const DIR = ['direction'];

// --- TCP (/proc/net/snmp Tcp) ---
export const networkTcpActiveOpens = metric({
  name: 'network_tcp_active_opens', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'TCP connections opened actively (connect(), CLOSED to SYN-SENT); Tcp.ActiveOpens.',
});
export const networkTcpPassiveOpens = metric({
  name: 'network_tcp_passive_opens', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'TCP connections accepted passively (LISTEN to SYN-RECV); Tcp.PassiveOpens.',
});
export const networkTcpAttemptFails = metric({
  name: 'network_tcp_attempt_fails', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'TCP connection attempts that failed (SYN-SENT/SYN-RECV to CLOSED or LISTEN); Tcp.AttemptFails.',
});
export const networkTcpEstablishedResets = metric({
  name: 'network_tcp_established_resets', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'TCP connections reset from ESTABLISHED or CLOSE-WAIT; Tcp.EstabResets.',
});
export const networkTcpEstablishedConnections = metric({
  name: 'network_tcp_established_connections', kind: MetricKind.Gauge, unit: Unit.Count, labels: [],
  description: 'TCP connections currently in ESTABLISHED or CLOSE-WAIT; Tcp.CurrEstab.',
});
export const networkTcpSegments = metric({
  name: 'network_tcp_segments', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'TCP segments received (incl. errors) and sent (excl. retransmits); Tcp.InSegs / Tcp.OutSegs.',
});
export const networkTcpRetransmittedSegments = metric({
  name: 'network_tcp_retransmitted_segments', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP segments retransmitted; Tcp.RetransSegs.',
});
export const networkTcpReceiveErrors = metric({
  name: 'network_tcp_receive_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP segments received in error (bad header, checksum, no memory); Tcp.InErrs.',
});
export const networkTcpResetsSent = metric({
  name: 'network_tcp_resets_sent', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP segments sent with the RST flag; Tcp.OutRsts.',
});
export const networkTcpChecksumErrors = metric({
  name: 'network_tcp_checksum_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP segments received with a bad checksum; Tcp.InCsumErrors.',
});

// --- TCP extended (/proc/net/netstat TcpExt) ---
export const networkTcpListenOverflows = metric({
  name: 'network_tcp_listen_overflows', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'Times a listening socket\'s accept queue was full; TcpExt.ListenOverflows.',
});
export const networkTcpListenDrops = metric({
  name: 'network_tcp_listen_drops', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'Incoming SYNs and handshake ACKs dropped by a listening socket, any reason; TcpExt.ListenDrops.',
});
export const networkTcpTimeouts = metric({
  name: 'network_tcp_timeouts', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'TCP retransmission timer (RTO) expiries; TcpExt.TCPTimeouts.',
});
export const networkTcpSynRetransmits = metric({
  name: 'network_tcp_syn_retransmits', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'SYN and SYN-ACK retransmissions; TcpExt.TCPSynRetrans.',
});
export const networkTcpFastRetransmits = metric({
  name: 'network_tcp_fast_retransmits', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP fast retransmissions (loss recovery by duplicate ACK/SACK); TcpExt.TCPFastRetrans.',
});
export const networkTcpLostRetransmits = metric({
  name: 'network_tcp_lost_retransmits', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP retransmissions that were themselves lost; TcpExt.TCPLostRetransmit.',
});
export const networkTcpSlowStartRetransmits = metric({
  name: 'network_tcp_slow_start_retransmits', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP retransmissions sent in slow start after a timeout; TcpExt.TCPSlowStartRetrans.',
});
export const networkTcpSpuriousRtos = metric({
  name: 'network_tcp_spurious_rtos', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'TCP retransmission timeouts found to be spurious (F-RTO); TcpExt.TCPSpuriousRTOs.',
});
export const networkTcpLossProbes = metric({
  name: 'network_tcp_loss_probes', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP tail loss probes sent; TcpExt.TCPLossProbes.',
});
export const networkTcpAborts = metric({
  name: 'network_tcp_aborts', kind: COUNTER, unit: Unit.Events, labels: ['reason'],
  description:
    'TCP connections aborted with a RST, by reason: data (unread data at close or data after close), ' +
    'close, memory, timeout, linger; TcpExt.TCPAbortOn{Data,Close,Memory,Timeout,Linger}.',
});
export const networkTcpSyncookies = metric({
  name: 'network_tcp_syncookies', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'SYN cookies sent (SYN queue full) and valid cookies received; TcpExt.SyncookiesSent / SyncookiesRecv.',
});
export const networkTcpSyncookiesFailed = metric({
  name: 'network_tcp_syncookies_failed', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'Received SYN cookies that did not validate; TcpExt.SyncookiesFailed.',
});
export const networkTcpBacklogDrops = metric({
  name: 'network_tcp_backlog_drops', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP packets dropped because the socket backlog was full; TcpExt.TCPBacklogDrop.',
});
export const networkTcpReceiveQueuePrunes = metric({
  name: 'network_tcp_receive_queue_prunes', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'Times a TCP receive queue was pruned under memory pressure; TcpExt.PruneCalled.',
});
export const networkTcpReceiveQueueDrops = metric({
  name: 'network_tcp_receive_queue_drops', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP packets dropped because the receive buffer had no room; TcpExt.TCPRcvQDrop.',
});
export const networkTcpOutOfOrderDrops = metric({
  name: 'network_tcp_out_of_order_drops', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'Out-of-order TCP packets dropped for lack of receive memory; TcpExt.TCPOFODrop.',
});
export const networkTcpZeroWindowDrops = metric({
  name: 'network_tcp_zero_window_drops', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'TCP packets dropped because the receive window was zero; TcpExt.TCPZeroWindowDrop.',
});
export const networkTcpRequestQueueFullDrops = metric({
  name: 'network_tcp_request_queue_full_drops', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'SYNs dropped because the SYN queue was full and cookies were off; TcpExt.TCPReqQFullDrop.',
});
export const networkTcpMemoryPressures = metric({
  name: 'network_tcp_memory_pressures', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'Times TCP entered memory pressure (tcp_mem); TcpExt.TCPMemoryPressures.',
});

// --- UDP and UDP-Lite (/proc/net/snmp Udp, UdpLite) ---
export const networkUdpDatagrams = metric({
  name: 'network_udp_datagrams', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'UDP datagrams delivered to sockets and sent; Udp.InDatagrams / Udp.OutDatagrams.',
});
export const networkUdpNoPorts = metric({
  name: 'network_udp_no_ports', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP datagrams received for a port with no listener; Udp.NoPorts.',
});
export const networkUdpReceiveErrors = metric({
  name: 'network_udp_receive_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP datagrams received but not delivered (incl. buffer and checksum errors); Udp.InErrors.',
});
export const networkUdpReceiveBufferErrors = metric({
  name: 'network_udp_receive_buffer_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP datagrams dropped because the socket receive buffer was full; Udp.RcvbufErrors.',
});
export const networkUdpSendBufferErrors = metric({
  name: 'network_udp_send_buffer_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP datagrams not sent for lack of send buffer space; Udp.SndbufErrors.',
});
export const networkUdpChecksumErrors = metric({
  name: 'network_udp_checksum_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP datagrams received with a bad checksum; Udp.InCsumErrors.',
});
export const networkUdpliteDatagrams = metric({
  name: 'network_udplite_datagrams', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'UDP-Lite datagrams delivered and sent; UdpLite.InDatagrams / UdpLite.OutDatagrams.',
});
export const networkUdpliteNoPorts = metric({
  name: 'network_udplite_no_ports', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP-Lite datagrams received for a port with no listener; UdpLite.NoPorts.',
});
export const networkUdpliteReceiveErrors = metric({
  name: 'network_udplite_receive_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP-Lite datagrams received but not delivered; UdpLite.InErrors.',
});
export const networkUdpliteReceiveBufferErrors = metric({
  name: 'network_udplite_receive_buffer_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP-Lite datagrams dropped because the socket receive buffer was full; UdpLite.RcvbufErrors.',
});
export const networkUdpliteSendBufferErrors = metric({
  name: 'network_udplite_send_buffer_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP-Lite datagrams not sent for lack of send buffer space; UdpLite.SndbufErrors.',
});
export const networkUdpliteChecksumErrors = metric({
  name: 'network_udplite_checksum_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'UDP-Lite datagrams received with a bad checksum; UdpLite.InCsumErrors.',
});

// --- IPv4 (/proc/net/snmp Ip, /proc/net/netstat IpExt) ---
export const networkIpPackets = metric({
  name: 'network_ip_packets', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description:
    'IPv4 packets received (incl. errors) and handed down by local protocols to send; Ip.InReceives / Ip.OutRequests.',
});
export const networkIpBytes = metric({
  name: 'network_ip_bytes', kind: COUNTER, unit: Unit.Bytes, labels: DIR,
  description: 'IPv4 bytes received and sent; IpExt.InOctets / IpExt.OutOctets.',
});
export const networkIpDelivered = metric({
  name: 'network_ip_delivered', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'IPv4 packets delivered to local protocols (TCP, UDP, ICMP...); Ip.InDelivers.',
});
export const networkIpDiscards = metric({
  name: 'network_ip_discards', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'IPv4 packets discarded without an error in them (e.g. no buffer); Ip.InDiscards / Ip.OutDiscards.',
});
export const networkIpHeaderErrors = metric({
  name: 'network_ip_header_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'IPv4 packets discarded for header errors (checksum, version, TTL exceeded...); Ip.InHdrErrors.',
});
export const networkIpAddressErrors = metric({
  name: 'network_ip_address_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'IPv4 packets discarded for an invalid destination address; Ip.InAddrErrors.',
});
export const networkIpForwarded = metric({
  name: 'network_ip_forwarded', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'IPv4 packets forwarded to another host; Ip.ForwDatagrams.',
});
export const networkIpNoRoutes = metric({
  name: 'network_ip_no_routes', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'Outgoing IPv4 packets discarded because no route was found; Ip.OutNoRoutes.',
});
export const networkIpReassemblyFailures = metric({
  name: 'network_ip_reassembly_failures', kind: COUNTER, unit: Unit.Events, labels: [],
  description: 'IPv4 reassembly failures (timeouts, errors); Ip.ReasmFails.',
});
export const networkIpFragmentationFailures = metric({
  name: 'network_ip_fragmentation_failures', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'IPv4 packets discarded because they needed fragmenting but had DF set; Ip.FragFails.',
});

// --- ICMP (/proc/net/snmp Icmp) ---
export const networkIcmpMessages = metric({
  name: 'network_icmp_messages', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'ICMP messages received (incl. errors) and sent; Icmp.InMsgs / Icmp.OutMsgs.',
});
export const networkIcmpReceiveErrors = metric({
  name: 'network_icmp_receive_errors', kind: COUNTER, unit: Unit.Packets, labels: [],
  description: 'ICMP messages received with ICMP-specific errors (bad checksum, length); Icmp.InErrors.',
});
export const networkIcmpDestUnreachable = metric({
  name: 'network_icmp_dest_unreachable', kind: COUNTER, unit: Unit.Packets, labels: DIR,
  description: 'ICMP destination-unreachable messages received and sent; Icmp.InDestUnreachs / Icmp.OutDestUnreachs.',
});

export const METRICS = [
  networkTcpActiveOpens, networkTcpPassiveOpens, networkTcpAttemptFails, networkTcpEstablishedResets,
  networkTcpEstablishedConnections, networkTcpSegments, networkTcpRetransmittedSegments, networkTcpReceiveErrors,
  networkTcpResetsSent, networkTcpChecksumErrors,
  networkTcpListenOverflows, networkTcpListenDrops, networkTcpTimeouts, networkTcpSynRetransmits,
  networkTcpFastRetransmits, networkTcpLostRetransmits, networkTcpSlowStartRetransmits, networkTcpSpuriousRtos,
  networkTcpLossProbes, networkTcpAborts, networkTcpSyncookies, networkTcpSyncookiesFailed, networkTcpBacklogDrops,
  networkTcpReceiveQueuePrunes, networkTcpReceiveQueueDrops, networkTcpOutOfOrderDrops, networkTcpZeroWindowDrops,
  networkTcpRequestQueueFullDrops, networkTcpMemoryPressures,
  networkUdpDatagrams, networkUdpNoPorts, networkUdpReceiveErrors, networkUdpReceiveBufferErrors,
  networkUdpSendBufferErrors, networkUdpChecksumErrors,
  networkUdpliteDatagrams, networkUdpliteNoPorts, networkUdpliteReceiveErrors, networkUdpliteReceiveBufferErrors,
  networkUdpliteSendBufferErrors, networkUdpliteChecksumErrors,
  networkIpPackets, networkIpBytes, networkIpDelivered, networkIpDiscards, networkIpHeaderErrors,
  networkIpAddressErrors, networkIpForwarded, networkIpNoRoutes, networkIpReassemblyFailures,
  networkIpFragmentationFailures,
  networkIcmpMessages, networkIcmpReceiveErrors, networkIcmpDestUnreachable,
] as const;
