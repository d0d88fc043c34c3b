import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

const SOURCE = 'from /proc/diskstats';

export const blockioDeviceOperations = metric({
  name: 'blockio_device_operations',
  kind: MetricKind.Counter,
  unit: Unit.Operations,
  labels: ['device', 'op'],
  description: `Completed read, write, discard and flush requests of the whole block device, ${SOURCE}.`,
});

export const blockioDeviceMerged = metric({
  name: 'blockio_device_merged',
  kind: MetricKind.Counter,
  unit: Unit.Operations,
  labels: ['device', 'op'],
  description: `Read, write and discard requests merged into an adjacent request before dispatch, ${SOURCE}.`,
});

export const blockioDeviceBytes = metric({
  name: 'blockio_device_bytes',
  kind: MetricKind.Counter,
  unit: Unit.Bytes,
  labels: ['device', 'op'],
  description: `Bytes read, written and discarded (512-byte sectors x 512), ${SOURCE}.`,
});

export const blockioDeviceTime = metric({
  name: 'blockio_device_time',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['device', 'op'],
  description: `Time spent on completed requests per op, summed over requests (kernel ms resolution), ${SOURCE}.`,
});

export const blockioDeviceInFlight = metric({
  name: 'blockio_device_in_flight',
  kind: MetricKind.Gauge,
  unit: Unit.Operations,
  labels: ['device'],
  description: `Requests issued to the device driver and not yet completed, ${SOURCE}.`,
});

export const blockioDeviceBusyTime = metric({
  name: 'blockio_device_busy_time',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['device'],
  description: `Time the device had at least one request in flight (io_ticks; its rate is utilization), ${SOURCE}.`,
});

export const blockioDeviceWeightedTime = metric({
  name: 'blockio_device_weighted_time',
  kind: MetricKind.Counter,
  unit: Unit.Nanoseconds,
  labels: ['device'],
  description: `Request time weighted by the number in flight (its rate is the average queue depth), ${SOURCE}.`,
});

export const METRICS = [
  blockioDeviceOperations,
  blockioDeviceMerged,
  blockioDeviceBytes,
  blockioDeviceTime,
  blockioDeviceInFlight,
  blockioDeviceBusyTime,
  blockioDeviceWeightedTime,
] as const;
