/** [cgroups] defaults (src/config/agent.ts has the same), for samplers run without an agent config. */
export const DEFAULT_LIMITS = { maxCgroups: 1024, maxDepth: 6, openFiles: 1024 } as const;
