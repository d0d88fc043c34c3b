import type { SamplerDefinition } from './types.js';
import { blockioDiskstatsSampler } from './blockio/diskstats/sampler.js';
import { blockioLatencySampler } from './blockio/latency/sampler.js';
import { blockioRequestsSampler } from './blockio/requests/sampler.js';
import { cgroupResourcesSampler } from './cgroup/sampler.js';
import { cpuCoresSampler } from './cpu/cores/sampler.js';
import { cpuMigrationsSampler } from './cpu/migrations/sampler.js';
import { cpuPerfSampler } from './cpu/perf/sampler.js';
import { cpuSoftirqSampler } from './cpu/softirq/sampler.js';
import { cpuUsageSampler } from './cpu/usage/sampler.js';
import { filesystemLatencySampler } from './filesystem/latency/sampler.js';
import { memoryMeminfoSampler } from './memory/meminfo/sampler.js';
import { memoryVmstatSampler } from './memory/vmstat/sampler.js';
import { networkDropsSampler } from './network/drops/sampler.js';
import { networkInterfacesSampler } from './network/interfaces/sampler.js';
import { networkProtocolsSampler } from './network/protocols/sampler.js';
import { networkTrafficSampler } from './network/traffic/sampler.js';
import { rezolusBpfSampler } from './rezolus/bpf/sampler.js';
import { rezolusSelfSampler } from './rezolus/self/sampler.js';
import { schedulerProcsSampler } from './scheduler/procs/sampler.js';
import { schedulerRunqueueSampler } from './scheduler/runqueue/sampler.js';
import { syscallCountsSampler } from './syscall/counts/sampler.js';
import { syscallLatencySampler } from './syscall/latency/sampler.js';
import { tcpConnectLatencySampler } from './tcp/connect_latency/sampler.js';
import { tcpPacketLatencySampler } from './tcp/packet_latency/sampler.js';
import { tcpReceiveSampler } from './tcp/receive/sampler.js';
import { tcpRetransmitSampler } from './tcp/retransmit/sampler.js';

/** Every sampler, sorted by name: the one list the agent, the config and the docs read. */
export const SAMPLERS: readonly SamplerDefinition[] = [
  blockioDiskstatsSampler,
  blockioLatencySampler,
  blockioRequestsSampler,
  cgroupResourcesSampler,
  cpuCoresSampler,
  cpuMigrationsSampler,
  cpuPerfSampler,
  cpuSoftirqSampler,
  cpuUsageSampler,
  filesystemLatencySampler,
  memoryMeminfoSampler,
  memoryVmstatSampler,
  networkDropsSampler,
  networkInterfacesSampler,
  networkProtocolsSampler,
  networkTrafficSampler,
  rezolusBpfSampler,
  rezolusSelfSampler,
  schedulerProcsSampler,
  schedulerRunqueueSampler,
  syscallCountsSampler,
  syscallLatencySampler,
  tcpConnectLatencySampler,
  tcpPacketLatencySampler,
  tcpReceiveSampler,
  tcpRetransmitSampler,
];

export const SAMPLER_NAMES: readonly string[] = SAMPLERS.map((s) => s.name);
