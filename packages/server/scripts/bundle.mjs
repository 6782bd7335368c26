#!/usr/bin/env node
// The published JavaScript (`npm run bundle`, after `tsc -b`): the compiled dist/ bundled by rolldown into
// bundle/, one file per entry and shared chunks, with every package (the protocol, zod, ws, the drivers …) left an
// import. Node 20's ES module loader costs about a millisecond of CPU a module, more than the modules' size; the
// server's 89 modules on the root import, in a few files, take that much off `import '@promethea/cpp-server'`
// (bench/README.md, "Import cost"). dist/ stays what it was: the types the package ships, and the modules the
// monorepo's own tools and tests run.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { rolldown } from 'rolldown';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const OUT_DIR = 'bundle';
const COMPILED = join(packageRoot, 'dist/');
/** The CLI's module, which bin/cpp-server.js imports: not an export of the package, an entry of the bundle. */
const CLI = 'cli/cpp-server.js';

/** Each entry of the bundle by its path in bundle/, read from the package's exports: bundle/x.js is built from dist/x.js. */
function entries() {
  const { exports } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
  const published = Object.values(exports).flatMap((target) => (typeof target === 'object' ? [target.default] : []));
  const paths = [...published.map((path) => path.replace(`./${OUT_DIR}/`, '')), CLI];
  return Object.fromEntries(paths.map((path) => [path.replace(/\.js$/, ''), join(COMPILED, path)]));
}

/**
 * Each module with the source map tsc wrote beside it, so that the bundle's maps lead to src/ (which the package
 * ships), not to dist/'s JavaScript (which it does not).
 */
const compiledWithSourceMaps = {
  name: 'compiled-with-source-maps',
  load(id) {
    if (!id.startsWith(COMPILED)) return null;
    return { code: readFileSync(id, 'utf8'), map: readFileSync(`${id}.map`, 'utf8') };
  },
};

/** A bare specifier (`ws`, `node:http`, `@promethea/cpp-protocol`) stays an import: packages are shared with the application. */
const isPackage = (specifier) => !specifier.startsWith('.') && !specifier.startsWith('/');

rmSync(join(packageRoot, OUT_DIR), { recursive: true, force: true });
const bundle = await rolldown({ input: entries(), external: isPackage, platform: 'node', plugins: [compiledWithSourceMaps], logLevel: 'warn' });
await bundle.write({ dir: join(packageRoot, OUT_DIR), format: 'esm', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js', sourcemap: true });
await bundle.close();
