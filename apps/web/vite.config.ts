import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Relative asset URLs, so that the built UI works wherever cpp-server mounts it.
export default defineConfig({
  base: './',
  plugins: [react()],
  // Source maps are written for local debugging but not linked from the code, and cpp-server does not serve them.
  // No asset is inlined as a data: URL: the page's policy loads fonts and images only from its own origin.
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: 'hidden', assetsInlineLimit: 0 },
  server: {
    // `npm run dev -w @promethea/cpp-web` next to a running cpp-server: the session socket goes to it.
    proxy: { '/v1/cpp/session': { target: 'ws://127.0.0.1:8080', ws: true } },
  },
});
