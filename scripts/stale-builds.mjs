// Which builds of the repository are older than what they are built from: `npm start` runs only those.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The TypeScript projects `tsc -b` builds, each recording its last build in tsconfig.tsbuildinfo. */
export const TYPESCRIPT_PROJECTS = [
  'packages/protocol',
  'packages/client',
  'packages/server',
  'packages/react',
  'packages/ai-sdk',
  'conformance',
];

/**
 * The packages whose JavaScript for Node is a bundle of their build (`npm run bundle`, scripts/bundle-package.mjs):
 * the CLI in dist/ imports the protocol by name, which Node resolves to packages/protocol/bundle.
 */
export const BUNDLED_PACKAGES = ['packages/protocol', 'packages/server'];

/** What the web UI's build (apps/web/dist) is made from, the built libraries it bundles among them. */
export const WEB_UI_INPUTS = [
  'apps/web/src',
  'apps/web/index.html',
  'apps/web/vite.config.ts',
  'apps/web/package.json',
  'packages/protocol/dist',
  'packages/client/dist',
  'packages/react/dist',
];

/** The newest modification time under the paths (files, or folders walked whole); 0 when none exists. */
function newest(paths) {
  let time = 0;
  for (const path of paths) {
    if (!existsSync(path)) continue;
    const stats = statSync(path);
    time = Math.max(
      time,
      stats.isDirectory() ? newest(readdirSync(path).map((name) => join(path, name))) : stats.mtimeMs,
    );
  }
  return time;
}

/** Whether `tsc -b` has something to build: a project never built, or with a source or tsconfig newer than its build. */
export function typeScriptIsStale(root) {
  const shared = newest([join(root, 'tsconfig.base.json')]);
  return TYPESCRIPT_PROJECTS.some((project) => {
    const built = newest([join(root, project, 'tsconfig.tsbuildinfo')]);
    // What tsc -b itself reads: a package.json change alone would leave the build record old, and stale forever.
    const inputs = newest(['src', 'tsconfig.json'].map((name) => join(root, project, name)));
    return built === 0 || Math.max(inputs, shared) > built;
  });
}

/** Whether a package's bundle is missing or older than its last build (as after a `tsc -b` run alone). */
export function bundlesAreStale(root) {
  return BUNDLED_PACKAGES.some((project) => {
    const bundled = newest([join(root, project, 'bundle')]);
    return bundled === 0 || newest([join(root, project, 'tsconfig.tsbuildinfo')]) > bundled;
  });
}

/** Whether the web UI was never built, or something it is built from changed since. */
export function webUiIsStale(root) {
  const built = newest([join(root, 'apps/web/dist/index.html')]);
  return built === 0 || newest(WEB_UI_INPUTS.map((input) => join(root, input))) > built;
}
