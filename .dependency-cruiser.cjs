// Import boundaries over src/ (README, under Layout): a stage imports only the
// stages before it. Checked by test/boundaries.test.ts in `npm test`, and by
// `npm run boundaries` alone. Paths are relative to the directory it runs in.
//
// Type-only imports count: `tsPreCompilationDeps` keeps `import type` edges in
// the graph, since a type-only cycle or a type imported across a boundary is
// still a coupling. A cycle is reported by one rule: `no-cycle` when every edge
// is a runtime import, `no-type-cycle` when at least one edge is type-only.

/** The consumers of the bus and what they write with: they see frames, never the code that makes them. */
const CONSUMERS = [
  '^src/exporter/',
  '^src/record/',
  '^src/hindsight/',
  '^src/viewer/',
  '^src/alert/',
  '^src/sources/',
  '^src/parquet/',
  '^src/recording/',
  '^src/spool/',
  '^src/files/',
  '^src/status/',
];

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'An import cycle (runtime imports only): break it by moving what both sides need into a module of its own.',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-type-cycle',
      severity: 'error',
      comment: 'An import cycle through at least one `import type`: still a coupling; move the type next to what both sides need.',
      from: { path: '^src/' },
      to: { circular: true, via: { dependencyTypes: ['type-only'] } },
    },
    {
      name: 'samplers-not-to-bus-or-frame',
      severity: 'error',
      comment: 'Samplers read the machine and return points; publishing (bus/) and encoding (frame/) come after them.',
      from: { path: '^src/samplers/' },
      to: { path: ['^src/bus/', '^src/frame/'] },
    },
    {
      name: 'frame-not-to-bus-or-samplers',
      severity: 'error',
      comment: 'frame/ is pure encode/decode: it knows the metric vocabulary (metrics/), not the samplers nor the transport.',
      from: { path: '^src/frame/' },
      to: { path: ['^src/bus/', '^src/samplers/'] },
    },
    {
      name: 'consumers-not-to-producers',
      severity: 'error',
      comment: 'Consumers work from frames and descriptors; the samplers, the native addon and the agent are the producing side.',
      from: { path: CONSUMERS },
      to: { path: ['^src/samplers/', '^src/native/', '^src/agent/'] },
    },
    {
      name: 'parquet-not-to-nats',
      severity: 'error',
      comment: 'Parquet writing works on rows, whatever their source: no bus/ and no NATS client.',
      from: { path: ['^src/parquet/', '^src/recording/', '^src/files/'] },
      to: { path: ['^src/bus/', '(^|/)node_modules/@nats-io/', '^@nats-io/'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve to a file: a typo, or a `.js` specifier whose `.ts` file is gone.',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    // nodenext: `./x.js` in a .ts file means ./x.ts; dependency-cruiser falls back
    // from a missing .js to the .ts (its resolver), and the tsconfig gives it the rest.
    tsConfig: { fileName: 'tsconfig.json' },
    // Packages resolve through their `exports` (the @nats-io packages have no `main`).
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    skipAnalysisNotInRules: true,
  },
};
