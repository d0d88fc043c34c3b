import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

const SOURCE = 'from /proc/net/dev';

export const networkDeviceBytes = metric({
  name: 'network_device_bytes',
  kind: MetricKind.Counter,
  unit: Unit.Bytes,
  labels: ['device', 'direction'],
  description: `Bytes received or transmitted by the network interface, ${SOURCE}.`,
});

export const networkDevicePackets = metric({
  name: 'network_device_packets',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device', 'direction'],
  description: `Packets received or transmitted by the network interface, ${SOURCE}.`,
});

export const networkDeviceErrors = metric({
  name: 'network_device_errors',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device', 'direction'],
  description: `Receive or transmit errors the driver reported for the interface (errs), ${SOURCE}.`,
});

export const networkDeviceDrops = metric({
  name: 'network_device_drops',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device', 'direction'],
  description: `Packets dropped on receive or transmit by the interface or its driver (drop), ${SOURCE}.`,
});

export const networkDeviceFifoErrors = metric({
  name: 'network_device_fifo_errors',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device', 'direction'],
  description: `Receive or transmit FIFO buffer errors (overruns/underruns) of the interface (fifo), ${SOURCE}.`,
});

export const networkDeviceCompressed = metric({
  name: 'network_device_compressed',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device', 'direction'],
  description: `Compressed packets received or transmitted (CSLIP/PPP drivers only), ${SOURCE}.`,
});

export const networkDeviceFrameErrors = metric({
  name: 'network_device_frame_errors',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device'],
  description: `Received frames with alignment, CRC or length errors (receive frame), ${SOURCE}.`,
});

export const networkDeviceMulticast = metric({
  name: 'network_device_multicast',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device'],
  description: `Multicast packets received by the interface (receive multicast), ${SOURCE}.`,
});

export const networkDeviceCollisions = metric({
  name: 'network_device_collisions',
  kind: MetricKind.Counter,
  unit: Unit.Events,
  labels: ['device'],
  description: `Collisions detected while transmitting (transmit colls), ${SOURCE}.`,
});

export const networkDeviceCarrierErrors = metric({
  name: 'network_device_carrier_errors',
  kind: MetricKind.Counter,
  unit: Unit.Packets,
  labels: ['device'],
  description: `Transmit errors from carrier loss or link problems (transmit carrier), ${SOURCE}.`,
});

export const METRICS = [
  networkDeviceBytes,
  networkDevicePackets,
  networkDeviceErrors,
  networkDeviceDrops,
  networkDeviceFifoErrors,
  networkDeviceCompressed,
  networkDeviceFrameErrors,
  networkDeviceMulticast,
  networkDeviceCollisions,
  networkDeviceCarrierErrors,
] as const;
