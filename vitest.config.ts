import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

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
    include: ['packages/*/test/**/*.test.ts', 'apps/*/test/**/*.test.ts', 'conformance/test/**/*.test.ts', 'bench/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
  },
});
