// The layers of docs/ARCHITECTURE.md, checked on every `npm test` (scripts/test.mjs): an import that runs the wrong
// way fails the run instead of waiting for a review. Type-only imports count: a type is a dependency too.
const server = (layers) => `^packages/server/src/(${layers})/`;

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'No module imports one that imports it back, in any package: each can be read apart.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'protocol-is-pure',
      comment: 'The protocol package imports nothing of ours and no Node module (browsers share it): zod, and itself.',
      severity: 'error',
      from: { path: '^packages/protocol/src/' },
      to: { pathNot: ['^packages/protocol/src/', '^node_modules/zod/'] },
    },
    {
      name: 'engine-knows-no-adapter',
      comment:
        'The engine owns its ports (ThreadLink, EngineObserver, ThreadLimits, …): it imports no transport, session, ' +
        'auth, cluster or observability module, only the store and model interfaces it calls.',
      severity: 'error',
      from: { path: server('engine') },
      to: { path: server('transport|session|auth|cluster|observability|threads|cli') },
    },
    {
      name: 'auth-knows-no-transport',
      comment: 'Who connects and what it may do is decided apart from how it connects (UpgradeRefusal is auth’s).',
      severity: 'error',
      from: { path: server('auth') },
      to: { path: server('transport|session|cluster|observability|cli') },
    },
    {
      name: 'session-knows-no-adapter',
      comment: 'A connection reports through its own SessionObserver port, not the concrete observers.',
      severity: 'error',
      from: { path: server('session') },
      to: { path: server('cluster|observability|cli') },
    },
    {
      name: 'threads-below-auth',
      comment: 'Importing threads is a store operation under limits it is given (its own ImportLimits).',
      severity: 'error',
      from: { path: server('threads') },
      to: { path: server('transport|session|auth|cluster|observability|cli') },
    },
    {
      name: 'adapters-below-the-core',
      comment: 'Stores and models are adapters behind ports: they import none of the layers that call them.',
      severity: 'error',
      from: { path: server('store|model') },
      to: { path: server('transport|session|auth|engine|cluster|observability|threads|cli') },
    },
  ],
  options: {
    // Another package of ours resolves to its build (dist, bundle): seen as a module, not followed into.
    doNotFollow: { path: ['node_modules', '(^|/)(dist|bundle)/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'default'] },
  },
};
