import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// Tests run against the TypeScript sources of the workspace packages; tests that spawn the CLI use the build,
// which `npm test` makes first.
export default defineConfig({
  resolve: {
    alias: [
      { find: /^@promethea\/cpp-protocol$/, replacement: source('./packages/protocol/src/index.ts') },
      { find: /^@promethea\/cpp-client(\/node)?$/, replacement: source('./packages/client/src/node.ts') },
      { find: /^@promethea\/cpp-server$/, replacement: source('./packages/server/src/index.ts') },
      // Each subpath export of the server is the source file of the same name: ./sqlite is src/sqlite.ts.
      { find: /^@promethea\/cpp-server\/([a-z-]+)$/, replacement: source('./packages/server/src/') + '$1.ts' },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts', 'bench/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
