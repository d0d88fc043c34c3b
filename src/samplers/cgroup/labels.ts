import type { Labels } from '../types.js';

/** The label objects of one cgroup's series, made once and reused while it exists. */
export interface CgroupLabels {
  readonly cgroup: Labels;
  readonly user: Labels;
  readonly system: Labels;
  pressure(resource: string, kind: 'some' | 'full'): Labels;
  io(device: string, op: 'read' | 'write'): Labels;
}

export function cgroupLabels(cgroup: string): CgroupLabels {
  const keyed = new Map<string, Labels>();
  const once = (key: string, make: () => Labels): Labels => {
    let l = keyed.get(key);
    if (l === undefined) keyed.set(key, (l = Object.freeze(make())));
    return l;
  };
  return {
    cgroup: Object.freeze({ cgroup }),
    user: Object.freeze({ cgroup, state: 'user' }),
    system: Object.freeze({ cgroup, state: 'system' }),
    pressure: (resource, kind) => once(`p ${resource} ${kind}`, () => ({ cgroup, resource, kind })),
    io: (device, op) => once(`io ${device} ${op}`, () => ({ cgroup, device, op })),
  };
}
