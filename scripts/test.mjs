// `npm test` after the build: checks formatting and lint (Biome), type-checks the tests and checks the layers
// (.dependency-cruiser.cjs) beside Vitest rather than before it. Vitest's files mostly wait on sockets, processes and
// the browser, leaving a core idle much of the time, so Biome's ~2 s, the type-check's ~20 s of compiler time and the
// layer check's ~5 s cost the run little; any of them failing fails the run. Arguments go to Vitest.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name) => fileURLToPath(new URL(`../node_modules/.bin/${name}`, import.meta.url));

/** Runs `command`, its output on ours; resolves with its exit status (1 for a signal). */
function run(command, args) {
  return new Promise((resolve) => {
    spawn(command, args, { cwd: root, stdio: 'inherit' })
      .on('error', (error) => {
        console.error(`npm test: ${command}: ${error.message}`);
        resolve(1);
      })
      .on('exit', (code) => resolve(code ?? 1));
  });
}

async function typeCheck() {
  for (const project of ['tsconfig.test.json', 'apps/web/test']) {
    const status = await run(bin('tsc'), ['-p', project]);
    if (status !== 0) {
      console.error(`npm test: the type-check of ${project} failed`);
      return status;
    }
  }
  return 0;
}

/** The sources of every package, the web UI and the conformance kit, against the layer rules. */
async function layerCheck() {
  const sources = readdirSync(new URL('../packages', import.meta.url)).map((name) => `packages/${name}/src`);
  const status = await run(bin('depcruise'), [
    '--config',
    '.dependency-cruiser.cjs',
    ...sources,
    'apps/web/src',
    'conformance/src',
  ]);
  if (status !== 0) console.error('npm test: the layer check (.dependency-cruiser.cjs) failed');
  return status;
}

/** Formatting and lint (biome.jsonc): `biome ci` changes nothing and fails on any difference or finding. */
async function styleCheck() {
  const status = await run(bin('biome'), ['ci', '--reporter=summary', '.']);
  if (status !== 0) console.error("npm test: Biome's check failed; `npx biome check --write .` fixes the formatting");
  return status;
}

/** One after the other: they share the core Vitest leaves idle. */
async function staticChecks() {
  const styled = await styleCheck();
  const typed = await typeCheck();
  const layered = await layerCheck();
  return styled || typed || layered;
}

const statuses = await Promise.all([staticChecks(), run(bin('vitest'), ['run', ...process.argv.slice(2)])]);
process.exit(statuses.find((status) => status !== 0) ?? 0);
