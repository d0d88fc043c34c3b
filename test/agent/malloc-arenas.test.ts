import test from 'ava';
import { AGENT_MALLOC_ARENAS, agentMallocArenas, applyAgentMallocArenas } from '../../src/agent/malloc-arenas.js';
import { RezolusError } from '../../src/errors.js';

test('rezolus agent shares one malloc arena between its threads; other modes, and an agent given MALLOC_ARENA_MAX, are left alone', (t) => {
  t.is(AGENT_MALLOC_ARENAS, 1);
  t.is(agentMallocArenas(['agent', '--interval', '100ms'], {}), 1);
  t.is(agentMallocArenas(['agent'], {}), 1);
  t.is(agentMallocArenas(['exporter'], {}), undefined);
  t.is(agentMallocArenas(['up'], {}), undefined);
  t.is(agentMallocArenas([], {}), undefined);
  t.is(agentMallocArenas(['agent'], { MALLOC_ARENA_MAX: '4' }), undefined, "glibc read the user's own limit at start");
});

test('the limit goes through the malloc addon, and an agent without it runs on', (t) => {
  const asked: number[] = [];
  const addon = {
    mallocArenaMax: (n: number) => {
      asked.push(n);
      return true;
    },
    mallocTrim: () => false,
    reduceHeap: () => false,
    reexec: () => 'not here',
    hideArgs: () => 0,
  };
  t.is(applyAgentMallocArenas(['exporter'], {}, () => addon), undefined);
  t.deepEqual(asked, [], 'another mode does not even load it');
  t.is(applyAgentMallocArenas(['agent'], {}, () => ({ mallocArenaMax: () => false, mallocTrim: () => false, reduceHeap: () => false, reexec: () => 'not here', hideArgs: () => 0 })), undefined, 'not glibc');
  const missing = (): never => {
    throw new RezolusError('NATIVE_UNAVAILABLE', 'native addon is not built');
  };
  t.is(applyAgentMallocArenas(['agent'], {}, missing), undefined);
  t.is(applyAgentMallocArenas(['agent'], {}, () => addon), 1);
  t.deepEqual(asked, [1]);
});
