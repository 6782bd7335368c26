import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The bench's own tests (npx vitest run --config bench/vitest.config.ts): they run against the built packages,
// as the bench does.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: { include: ['test/**/*.test.ts'], testTimeout: 20_000 },
});
