export { SAMPLERS, SAMPLER_NAMES, findSampler } from './registry.js';
export type * from './types.js';
export { SamplerUnsupportedError } from './types.js';
