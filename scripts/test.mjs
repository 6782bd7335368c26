// `npm test` after the build: type-checks the tests beside Vitest rather than before it. Vitest's files mostly
// wait on sockets, processes and the browser, leaving a core idle much of the time, so the type-check's ~20 s of
// compiler time costs the run little; either failing fails the run. Arguments go to Vitest.
import { spawn } from 'node:child_process';
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

const statuses = await Promise.all([typeCheck(), run(bin('vitest'), ['run', ...process.argv.slice(2)])]);
process.exit(statuses.find((status) => status !== 0) ?? 0);
