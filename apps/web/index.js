import { fileURLToPath } from 'node:url';

/** The built web UI: serve this directory at `/` (CPPServer's `staticDir`, cpp-server's `--static-dir`). */
export const staticDir = fileURLToPath(new URL('./dist/', import.meta.url));
