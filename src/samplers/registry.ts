import type { SamplerDefinition } from './types.js';
import { blockioDiskstatsSampler } from './blockio/diskstats/sampler.js';
import { cpuCoresSampler } from './cpu/cores/sampler.js';
import { cpuUsageSampler } from './cpu/usage/sampler.js';
import { memoryMeminfoSampler } from './memory/meminfo/sampler.js';
import { memoryVmstatSampler } from './memory/vmstat/sampler.js';
import { networkInterfacesSampler } from './network/interfaces/sampler.js';
import { networkProtocolsSampler } from './network/protocols/sampler.js';
import { rezolusSelfSampler } from './rezolus/self/sampler.js';
import { schedulerProcsSampler } from './scheduler/procs/sampler.js';
import { schedulerRunqueueSampler } from './scheduler/runqueue/sampler.js';

/** Every sampler, sorted by name: the one list the agent, the config and the docs read. */
export const SAMPLERS: readonly SamplerDefinition[] = [
  blockioDiskstatsSampler,
  cpuCoresSampler,
  cpuUsageSampler,
  memoryMeminfoSampler,
  memoryVmstatSampler,
  networkInterfacesSampler,
  networkProtocolsSampler,
  rezolusSelfSampler,
  schedulerProcsSampler,
  schedulerRunqueueSampler,
];

export const SAMPLER_NAMES: readonly string[] = SAMPLERS.map((s) => s.name);
