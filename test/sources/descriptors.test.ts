import test from 'ava';
import type { KV } from '@nats-io/kv';
import { DescriptorCache } from '../../src/sources/descriptors.js';
import { descriptorKey } from '../../src/bus/subjects.js';
import { hashDescriptorJson } from '../../src/frame/descriptor.js';
import { silentLogger } from '../../src/log/logger.js';

const json = JSON.stringify({
  v: 1,
  sampler: 'cpu_usage',
  metrics: { cpu_usage: { kind: 'counter', unit: 'nanoseconds', labels: ['state'], description: 'CPU time' } },
  series: [['cpu_usage', ['user']]],
});
const hash = hashDescriptorJson(json);

/** A bucket stand-in holding these keys, counting reads. */
function bucket(entries: Record<string, string>): { kv: KV; reads: string[] } {
  const reads: string[] = [];
  const kv = {
    get: async (key: string) => {
      reads.push(key);
      const v = entries[key];
      return v === undefined ? null : { value: new TextEncoder().encode(v), string: () => v };
    },
  } as unknown as KV;
  return { kv, reads };
}

test('a descriptor is read under its host\'s key first, and once found serves every host with that hash', async (t) => {
  const { kv, reads } = bucket({ [descriptorKey('web-1', hash)]: json });
  const cache = new DescriptorCache(kv, silentLogger());
  t.is((await cache.resolve(hash, 'web-1'))?.sampler, 'cpu_usage');
  t.is((await cache.resolve(hash, 'web-2'))?.sampler, 'cpu_usage', 'content-addressed: no read for another host');
  t.deepEqual(reads, [`web-1.${hash}`]);
});

test('the bare hash (agents from before per-host keys) is the fallback', async (t) => {
  const { kv, reads } = bucket({ [hash]: json });
  const cache = new DescriptorCache(kv, silentLogger());
  t.is((await cache.resolve(hash, 'old-host'))?.sampler, 'cpu_usage');
  t.deepEqual(reads, [`old-host.${hash}`, hash]);
});

test('junk another host put under the bare hash or under its own keys does not touch a host whose own key holds the descriptor', async (t) => {
  const { kv } = bucket({ [hash]: '{"junk":1}', [descriptorKey('evil', hash)]: '{"junk":2}', [descriptorKey('web-1', hash)]: json });
  const cache = new DescriptorCache(kv, silentLogger());
  t.is(await cache.resolve(hash, 'evil'), undefined, 'the tampered copy is refused: content does not match the hash');
  t.is((await cache.resolve(hash, 'web-1'))?.sampler, 'cpu_usage');
});

test('a host name that is not a subject token is not looked up', async (t) => {
  const { kv, reads } = bucket({});
  const cache = new DescriptorCache(kv, silentLogger());
  t.is(await cache.resolve(hash, 'a.b'), undefined);
  t.is(await cache.resolve(hash, '*'), undefined);
  t.deepEqual(reads, []);
});
