import test from 'ava';
import type { NativeAddon } from '../../src/native/index.js';
import type { BpfLayout } from '../../src/samplers/kernel/layout.js';
import { selectPrograms } from '../../src/samplers/kernel/select.js';

/** A kernel whose tracepoints pass these many arguments (modules by `module/event`). */
function kernel(args: Record<string, number>): NativeAddon {
  return {
    btfTracepointArgs: (event: string, module?: string) => args[module === undefined ? event : `${module}/${event}`] ?? -1,
  } as unknown as NativeAddon;
}

const layout: BpfLayout = {
  object: 'x',
  programs: [
    { name: 'switch', event: 'sched_switch' },
    { name: 'retransmit', event: 'tcp_retransmit_skb', args: 3 },
    { name: 'retransmit_v1', event: 'tcp_retransmit_skb', args: 2 },
    { name: 'fsync', event: 'ext4_sync_file_enter', module: 'ext4' },
  ],
  maps: {},
};

test('every program whose tracepoint exists, and the variant that matches this kernel', (t) => {
  const s = selectPrograms(layout, kernel({ sched_switch: 4, tcp_retransmit_skb: 3, ext4_sync_file_enter: 2 }));
  t.deepEqual(s, { load: ['switch', 'retransmit', 'fsync'], degraded: [] });
  t.deepEqual(selectPrograms(layout, kernel({ sched_switch: 4, tcp_retransmit_skb: 2, 'ext4/ext4_sync_file_enter': 2 })).load, [
    'switch', 'retransmit_v1', 'fsync',
  ]);
});

test('a missing tracepoint and a tracepoint with arguments no variant knows are said per program', (t) => {
  const s = selectPrograms(layout, kernel({ sched_switch: 4, tcp_retransmit_skb: 5 }));
  t.deepEqual(s.load, ['switch']);
  t.deepEqual(s.degraded, [
    'fsync: no tracepoint ext4_sync_file_enter on this kernel (module ext4 not loaded?)',
    'retransmit, retransmit_v1: tracepoint tcp_retransmit_skb passes 5 arguments here, the programs know 3 or 2',
  ]);
});

test('events can be renamed (how tests force a failure)', (t) => {
  const s = selectPrograms(layout, kernel({ sched_switch: 4, tcp_retransmit_skb: 3 }), { switch: 'sched_switch_missing' });
  t.deepEqual(s.degraded[0], 'switch: no tracepoint sched_switch_missing on this kernel');
});
