#!/usr/bin/env node
// Writes the published JSON Schema files from the built package (run `npm run schemas`, which builds first):
// packages/protocol/schemas/ ships in the npm package, docs/schemas/ is what the docs and the AsyncAPI document link.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jsonSchemaFiles } from '../dist/index.js';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const targets = [join(packageRoot, 'schemas'), join(packageRoot, '..', '..', 'docs', 'schemas')];

const files = jsonSchemaFiles();
for (const target of targets) {
  // Cleared first, so that the schema of a frame type that no longer exists does not linger.
  for (const side of ['client', 'server', 'export']) rmSync(join(target, side), { recursive: true, force: true });
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(target, path)), { recursive: true });
    writeFileSync(join(target, path), text);
  }
  console.log(`wrote ${Object.keys(files).length} schemas to ${target}`);
}
