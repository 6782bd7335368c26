#!/usr/bin/env node
// `npm run bundle` in a package, after `tsc -b`: the JavaScript its package.json points Node to, in bundle/, built
// by rolldown from the compiled dist/: one file per entry and chunks for what entries share, with every package
// (the protocol, zod, ws, the drivers …) left an import, shared with the application. Node 20's ES module loader
// costs about a millisecond of CPU per module, more than the modules' size; the protocol's 42 modules and the
// server's 89 on `import '@promethea/cpp-server'`, in a few files, take that much off the import (bench/README.md,
// "Import cost"). dist/ stays what tsc wrote: the types the package ships, and the CLI that `npm start` and the
// CLI's tests run (dist/cli/cpp-server.js; the bin, installed or not, runs the bundle's).
//
// Entries: every target of the package's exports that is in bundle/ (bundle/x.js is built from dist/x.js), and
// the paths given as arguments (the server's CLI, which its bin imports).
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { rolldown } from 'rolldown';

const OUT_DIR = 'bundle';
const packageRoot = process.cwd();
const COMPILED = join(packageRoot, 'dist/');

/** The bundle's entries, by their path in bundle/ without `.js`, each the compiled module of the same path. */
function entries() {
  const { exports } = JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8'));
  const targets = Object.values(exports).flatMap((target) =>
    typeof target === 'object' ? Object.values(target) : [target],
  );
  const exported = targets
    .filter((path) => path.startsWith(`./${OUT_DIR}/`))
    .map((path) => path.slice(`./${OUT_DIR}/`.length));
  return Object.fromEntries(
    [...exported, ...process.argv.slice(2)].map((path) => [path.replace(/\.js$/, ''), join(COMPILED, path)]),
  );
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

/** A bare specifier (`ws`, `node:http`, `@promethea/cpp-protocol`) stays an import. */
const isPackage = (specifier) => !specifier.startsWith('.') && !specifier.startsWith('/');

rmSync(join(packageRoot, OUT_DIR), { recursive: true, force: true });
const bundle = await rolldown({
  input: entries(),
  external: isPackage,
  platform: 'node',
  plugins: [compiledWithSourceMaps],
  logLevel: 'warn',
});
await bundle.write({
  dir: join(packageRoot, OUT_DIR),
  format: 'esm',
  entryFileNames: '[name].js',
  chunkFileNames: 'chunks/[name]-[hash].js',
  sourcemap: true,
});
await bundle.close();
