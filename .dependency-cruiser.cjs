// The import rule (issue 24): the layers of src/ point one way, down. `npm run deps` (and
// so `npm test`) fails when a module imports from a layer above its own.
//
// Layers, lowest first; a module may import from its own layer and the ones below it:
const LAYERS = [
  // Types, the error catalogue, rules that need nothing else.
  ['domain'],
  // Storage and the building blocks everything shares.
  ['db', 'blob', 'security'],
  ['config', 'observability'],
  // Limits and the tus store's locks over the storage.
  ['limits', 'resumable'],
  // The use cases: what every entry point calls.
  ['services', 'uploads', 'downloads', 'sharing', 'auth', 'webdav', 'backup', 'migrate'],
  // The one place that builds them all from the configuration, and the storage it picks.
  ['composition.ts', 'configured-stores.ts'],
  // The entry points: they adapt HTTP and the command line to the use cases.
  ['http', 'cli', 'server.ts'],
];

/** A path pattern for the named folders (or files) right under src/. */
const under = (names) => `^src/(${names.map((name) => name.replace('.', '\\.')).join('|')})($|/)`;

const upward = LAYERS.slice(0, -1).map((layer, index) => ({
  name: `not-up-from-${layer.join('-').replace('.ts', '')}`,
  comment: `${layer.join(', ')} must not import from a layer above it (${LAYERS.slice(index + 1)
    .flat()
    .join(', ')}); see the layers in .dependency-cruiser.cjs`,
  severity: 'error',
  from: { path: under(layer) },
  to: { path: under(LAYERS.slice(index + 1).flat()) },
}));

module.exports = {
  forbidden: [
    ...upward,
    {
      name: 'adapters-apart',
      comment: 'HTTP code and CLI code do not import each other: both call the use cases (the CLI starts the server through server.ts)',
      severity: 'error',
      from: { path: '^src/(http|cli)/' },
      to: { path: '^src/(http|cli)/', pathNot: '^src/$1/' },
    },
    {
      name: 'sdk-stands-alone',
      comment: 'the SDK (filehaven/client) is published alone: it imports nothing of the server',
      severity: 'error',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/client/' },
    },
    {
      name: 'browser-scripts-share-helpers-only',
      comment: 'the browser scripts run in browsers: besides each other they import only the pure helpers they share with the pages',
      severity: 'error',
      from: { path: '^src/http/web/browser/' },
      to: {
        path: '^src/',
        pathNot: ['^src/http/web/browser/', '^src/config/units\\.ts$', '^src/http/web/format\\.ts$', '^src/http/web/upload-messages\\.ts$'],
      },
    },
    {
      name: 'no-circular',
      comment: 'a cycle of imports has no bottom: one of its modules belongs elsewhere',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    includeOnly: '^src/',
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
