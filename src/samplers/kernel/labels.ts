import type { Labels } from '../types.js';

/** `{ id }` label objects for CPUs 0..n-1, frozen once so every refresh reuses them. */
export function cpuLabels(n: number): readonly (Labels & { readonly id: string })[] {
  return Array.from({ length: n }, (_, i) => Object.freeze({ id: String(i) }));
}
