import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

const ALL = ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts', 'bench/test/**/*.test.ts', 'test/**/*.test.ts'];

/** Pure logic: no socket, no file, no process, no database. `npm run test:unit` runs them in seconds. */
const UNIT = [
  'packages/protocol/test/**/*.test.ts',
  'packages/server/test/engine/**/*.test.ts',
  'packages/server/test/auth/{client-address-and-audience,frame-rate-limiter,proof-check,replay-cache}.test.ts',
  'packages/server/test/cluster/{local-cluster,remote-frame}.test.ts',
  'packages/server/test/model/{demo-provider,generation,provider-factory,upstream-failures}.test.ts',
  'packages/server/test/session/backpressure-queue.test.ts',
  'packages/server/test/store/memory-store.test.ts',
  'packages/client/test/{reconnect-policy,session-url}.test.ts',
  'packages/client/test/cli/format-tree.test.ts',
  'packages/client/test/identity/{did-key-identity,kept-identity}.test.ts',
  'packages/react/test/{branch,graph-snapshot}.test.ts',
  'conformance/test/{pattern,thread-copies}.test.ts',
  'bench/test/paced-tokens.test.ts',
  'test/bench-harness.test.ts',
  'apps/web/test/tree-layout.test.ts',
];

/** Chromium driven through playwright-core: the web UI, and the client SDK in a browser. */
const BROWSER = ['apps/web/test/**/*.test.ts', 'packages/client/test/browser*.test.ts'];

/**
 * Soak-sized suites: a sample of their size in `npm test`, all of it under `npm run test:soak` (see
 * test/support/soak-size.ts).
 */
const SOAK = ['packages/server/test/reliability/crash-loop.test.ts', 'packages/client/test/reliability/flaky-clients.test.ts', 'packages/server/test/auth/fuzz.test.ts'];

// Tests run against the TypeScript sources of the workspace packages; tests that spawn the CLI use the build,
// which `npm test` makes first.
export default defineConfig({
  resolve: {
    alias: {
      '@promethea/cpp-protocol': source('./packages/protocol/src/index.ts'),
      '@promethea/cpp-client/node': source('./packages/client/src/node.ts'),
      '@promethea/cpp-client': source('./packages/client/src/node.ts'),
      '@promethea/cpp-server': source('./packages/server/src/index.ts'),
    },
  },
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    projects: [
      { extends: true, test: { name: 'unit', include: UNIT, exclude: [...configDefaults.exclude, ...BROWSER] } },
      // Real sockets, SQLite files, PostgreSQL, Redis, child processes: every test that is not of another project.
      { extends: true, test: { name: 'integration', include: ALL, exclude: [...configDefaults.exclude, ...UNIT, ...BROWSER, ...SOAK] } },
      { extends: true, test: { name: 'browser', include: BROWSER } },
      { extends: true, test: { name: 'soak', include: SOAK } },
    ],
  },
});
