import { metric, MetricKind, Unit } from '../../../metrics/metric.js';

const SOURCE = 'BPF on tp_btf block_rq_complete';

export const blockioOperations = metric({
  name: 'blockio_operations',
  kind: MetricKind.Counter,
  unit: Unit.Operations,
  labels: ['op'],
  description:
    'Completed block requests by op (read, write, flush, discard; the low 8 bits of cmd_flags, other ops are not counted), ' +
    'every device summed; a partial completion counts once per completion call, and the empty pre-flush write behind an ' +
    `fsync counts as a write of 0 bytes; ${SOURCE}.`,
});

export const blockioBytes = metric({
  name: 'blockio_bytes',
  kind: MetricKind.Counter,
  unit: Unit.Bytes,
  labels: ['op'],
  description: `Bytes of completed block requests by op (nr_bytes of the completion), every device summed; ${SOURCE}.`,
});

export const blockioSize = metric({
  name: 'blockio_size',
  kind: MetricKind.Histogram,
  unit: Unit.Bytes,
  labels: ['op'],
  description: `Size of completed block requests by op; zero-byte completions (flushes, empty pre-flush writes) are not recorded; ${SOURCE}.`,
});

export const blockioErrors = metric({
  name: 'blockio_errors',
  kind: MetricKind.Counter,
  unit: Unit.Operations,
  labels: ['op', 'error'],
  description:
    'Block requests completed with a non-OK blk_status_t, by op and kind: io (IOERR, MEDIUM), timeout, nospc, ' +
    'target (TARGET, RESV_CONFLICT), protection, unsupported (NOTSUPP), other (TRANSPORT, RESOURCE and the rest); ' +
    `${SOURCE}.`,
});

export const blockioRequeues = metric({
  name: 'blockio_requeues',
  kind: MetricKind.Counter,
  unit: Unit.Operations,
  labels: ['op'],
  description: 'Block requests put back on the queue for a later dispatch, by op; BPF on tp_btf block_rq_requeue.',
});

export const METRICS = [blockioOperations, blockioBytes, blockioSize, blockioErrors, blockioRequeues] as const;
