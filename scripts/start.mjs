// `npm start`: builds only what is stale, saying so, then runs cpp-server with the flags given to npm start.
// When nothing changed neither the compiler nor a bundler starts: the server is up in the time its own start takes.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bundlesAreStale, typeScriptIsStale, webUiIsStale } from './stale-builds.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

function build(message, command, args) {
  console.error(`npm start: ${message}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

if (typeScriptIsStale(root))
  build('building the TypeScript packages (tsc -b)…', process.execPath, [
    fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url)),
    '-b',
  ]);
if (bundlesAreStale(root))
  build('bundling the protocol and server packages (npm run bundle)…', 'npm', ['run', 'bundle', '--silent']);
if (webUiIsStale(root))
  build('building the web UI (vite build)…', 'npm', ['run', 'build', '--silent', '-w', '@promethea/cpp-web']);
await import('../packages/server/dist/cli/cpp-server.js');
