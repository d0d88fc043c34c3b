/**
 * The store keeper's descriptor check against a real nats-server: a probe
 * that misses starts a full check, which puts the missing descriptors again;
 * one put too recently to call missing is looked at again by the next check,
 * not left to the round-robin probe.
 */
import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { StoreKeeper, type DescriptorOwner } from '../../src/agent/store-keeper.js';
import { connectBus } from '../../src/bus/connect.js';
import { descriptorKey } from '../../src/bus/subjects.js';
import { loadAgentConfig } from '../../src/config/agent.js';
import { silentLogger } from '../../src/log/logger.js';
import { SAMPLER_NAMES } from '../../src/samplers/registry.js';
import { startTestNats } from '../helpers/nats.js';

test('a descriptor put just before the bucket lost it is put again by the next check, not the round-robin probe', async (t) => {
  const server = await startTestNats();
  const nc = await connectBus({ url: server.url, name: 'keeper', log: silentLogger() });
  try {
    const config = loadAgentConfig(undefined, SAMPLER_NAMES, { host: 'kept', natsUrl: server.url });
    // checkEveryMs far beyond the test: check() is called by hand
    const keeper = new StoreKeeper({
      nc, jsm: await jetstreamManager(nc), host: 'kept', stream: config.stream,
      descriptorTtlMs: config.descriptorTtlMs, statusTtlMs: 60_000, log: silentLogger(), checkEveryMs: 3_600_000,
    });
    const { descriptors: kv } = await keeper.provision();
    const old = Date.now() - 60_000;
    // 'lost' is missing and settled (the probe finds it first); s1..s4 are in the bucket; 'young' is missing, put just now
    const recent = [
      { hash: 'lost', putAt: old },
      ...['s1', 's2', 's3', 's4'].map((hash) => ({ hash, putAt: old })),
      { hash: 'young', putAt: Date.now() },
    ];
    for (const d of recent.slice(1, 5)) await kv.put(descriptorKey('kept', d.hash), `{"h":"${d.hash}"}`);
    const reput: string[][] = [];
    const owner: DescriptorOwner = {
      recentDescriptors: () => recent,
      reputDescriptors: (only) => {
        const hashes = [...(only ?? [])].sort();
        reput.push(hashes);
        return hashes.length;
      },
    };
    keeper.watch(owner);
    await keeper.check();
    t.deepEqual(reput, [['lost']], 'the settled missing descriptor is put again; the one put just now is not called missing yet');
    // the owner's put of 'lost' landed; 'young' is now past its in-flight time and still not in the bucket
    await kv.put(descriptorKey('kept', 'lost'), '{"h":"lost"}');
    recent[5] = { hash: 'young', putAt: old };
    await keeper.check();
    t.deepEqual(reput, [['lost'], ['young']], 'the next check puts the young one again');
    // and after that the checks are probes again: all present, nothing put
    await kv.put(descriptorKey('kept', 'young'), '{"h":"young"}');
    await keeper.check();
    await keeper.check();
    t.is(reput.length, 2);
    keeper.stop();
  } finally {
    await nc.close();
    await server.dispose();
  }
});
