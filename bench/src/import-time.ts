import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { median } from './latency-recorder.js';
import { modulesLoadedBy, packageOf } from './loaded-modules.js';

/**
 * npm run bench:import — what `import '@promethea/cpp-server'` costs an application that passes its own store and
 * model, in a new Node process, beside what Node costs to start at all and what importing `ws` alone costs.
 *
 * The packages are packed by npm and installed from the tarballs into a project outside the monorepo, so the
 * import reads what an installed application reads. Each round runs every case once, in an order that rotates,
 * so that the machine's other work falls on all of them alike; the report gives medians. A process reports its
 * own CPU time (user + system, all its threads) as its last act, which on a shared machine is steadier than the
 * wall time. The files are in the page cache after the warm-up: "cold" here is a new process, not a cold disk.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PACKAGES = ['@promethea/cpp-protocol', '@promethea/cpp-server', '@promethea/cpp-web'];
const WARM_UP_ROUNDS = 2;

interface Case {
  name: string;
  label: string;
  code: string;
}

const CASES: Case[] = [
  { name: 'node', label: 'node -e 0', code: '' },
  { name: 'ws', label: "import('ws')", code: "await import('ws');" },
  { name: 'cpp-server', label: "import('@promethea/cpp-server')", code: "await import('@promethea/cpp-server');" },
];

const run = promisify(execFile);

const { values: options } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    project: { type: 'string' },
    compare: { type: 'string' },
    profile: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (options.help) {
  console.log(`npm run bench:import -- [--rounds N] [--project DIR] [--compare DIR] [--profile DIR]
  --rounds N       timed rounds, each running every case once (default 20, after ${WARM_UP_ROUNDS} of warm-up)
  --project DIR    measure in DIR, a project where the packages are installed already, instead of packing them
  --compare DIR    also import @promethea/cpp-server as installed in DIR (another build), in the same rounds
  --profile DIR    also write a CPU profile (node --cpu-prof) of one import of @promethea/cpp-server to DIR`);
  process.exit(0);
}
const rounds = Number(options.rounds);
if (options.compare) {
  // Its own entry file, resolved there: the import then loads that install's packages, not this one's.
  const entry = pathToFileURL(
    createRequire(join(resolve(options.compare), 'package.json')).resolve('@promethea/cpp-server'),
  ).href;
  CASES.push({
    name: 'compared',
    label: `the same, installed in ${options.compare}`,
    code: `await import(${JSON.stringify(entry)});`,
  });
}

interface Sample {
  wallMs: number;
  cpuMs: number;
}

/** A new Node process running `code` as an ES module in the installed project; it prints its CPU time last. */
async function sample(project: string, code: string, nodeOptions: string[] = []): Promise<Sample> {
  const script = `${code} const { user, system } = process.cpuUsage(); process.stdout.write(String((user + system) / 1000));`;
  const started = performance.now();
  const { stdout } = await run(process.execPath, [...nodeOptions, '--input-type=module', '-e', script], {
    cwd: project,
  });
  return { wallMs: performance.now() - started, cpuMs: Number(stdout) };
}

/**
 * The packages as npm packs them, installed in a new project (dependencies from the local npm cache where it has
 * them). Their prepack is not run: `npm run bench:import` has just built and bundled the protocol and the server,
 * and @promethea/cpp-web is packed as last built (the server depends on it, but its root import does not load it).
 */
async function installPackedPackages(): Promise<string> {
  const project = await mkdtemp(join(tmpdir(), 'cpp-import-time-'));
  const packs = join(project, 'packs');
  await mkdir(packs);
  const packed = await run(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--pack-destination', packs, ...PACKAGES.flatMap((name) => ['-w', name])],
    { cwd: ROOT },
  );
  const tarballs = (JSON.parse(packed.stdout) as { filename: string }[]).map((entry) => join(packs, entry.filename));
  await writeFile(
    join(project, 'package.json'),
    JSON.stringify({ name: 'cpp-import-time', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund', ...tarballs], {
    cwd: project,
  });
  return project;
}

/** The modules an import loads, by the package they come from. */
async function modulesByPackage(project: string, code: string): Promise<Map<string, number>> {
  const byPackage = new Map<string, number>();
  for (const url of await modulesLoadedBy(code, project)) {
    const name = packageOf(url) ?? url;
    byPackage.set(name, (byPackage.get(name) ?? 0) + 1);
  }
  return byPackage;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { url: string; functionName: string } }[];
  samples: number[];
  timeDeltas: number[];
}

/** A profile's self time by where the code is: a package, Node's own JavaScript, or V8's (GC, compiling, …). */
function selfTimeByPackage(profile: CpuProfile): Map<string, number> {
  const placeOf = new Map(
    profile.nodes.map((node) => {
      const { url, functionName } = node.callFrame;
      const place = packageOf(url) ?? (url.startsWith('node:') ? 'node internals' : url || functionName);
      return [node.id, place];
    }),
  );
  const byPlace = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const place = placeOf.get(id)!;
    byPlace.set(place, (byPlace.get(place) ?? 0) + profile.timeDeltas[index]! / 1000);
  });
  return byPlace;
}

const startLoad = loadavg()[0]!;
if (startLoad > cpus().length)
  console.error(
    `Warning: the load average is ${startLoad.toFixed(1)} on ${cpus().length} CPUs; the wall times will be noisy.`,
  );
if (!options.project)
  console.error('packing and installing @promethea/cpp-protocol, -server and -web into a new project…');
const project = options.project ? resolve(options.project) : await installPackedPackages();
try {
  const samples = new Map<string, Sample[]>(CASES.map((testCase) => [testCase.name, []]));
  for (let round = 0; round < WARM_UP_ROUNDS + rounds; round += 1) {
    // Rotated each round, so that no case always runs just after another (or first, after the bench's own pause).
    const order = CASES.map((_, index) => CASES[(index + round) % CASES.length]!);
    for (const testCase of order) {
      const result = await sample(project, testCase.code);
      if (round >= WARM_UP_ROUNDS) samples.get(testCase.name)!.push(result);
    }
  }
  const endLoad = loadavg()[0]!;
  const nodeWall = median(samples.get('node')!.map((result) => result.wallMs));
  const nodeCpu = median(samples.get('node')!.map((result) => result.cpuMs));
  console.log(`| import (${rounds} rounds, medians) | wall ms | CPU ms | wall above node | CPU above node |`);
  console.log('| --- | --: | --: | --: | --: |');
  for (const testCase of CASES) {
    const wall = median(samples.get(testCase.name)!.map((result) => result.wallMs));
    const cpu = median(samples.get(testCase.name)!.map((result) => result.cpuMs));
    console.log(
      `| ${testCase.label} | ${wall.toFixed(0)} | ${cpu.toFixed(0)} | ${(wall - nodeWall).toFixed(0)} | ${(cpu - nodeCpu).toFixed(0)} |`,
    );
  }
  const modules = await modulesByPackage(project, CASES[2]!.code);
  const total = [...modules.values()].reduce((sum, count) => sum + count, 0);
  const parts = [...modules].sort((a, b) => b[1] - a[1]).map(([name, count]) => `${name} ${count}`);
  console.log(`\nmodules loaded by import('@promethea/cpp-server'): ${total} (${parts.join(', ')})`);
  console.log(
    `load average ${startLoad.toFixed(1)} at the start, ${endLoad.toFixed(1)} at the end, on ${cpus().length} CPUs; Node ${process.version}`,
  );
  if (options.profile) {
    const directory = resolve(options.profile);
    await rm(directory, { recursive: true, force: true });
    await sample(project, CASES[2]!.code, ['--cpu-prof', '--cpu-prof-dir', directory]);
    const [file] = await readdir(directory);
    const selfTimes = selfTimeByPackage(JSON.parse(await readFile(join(directory, file!), 'utf8')) as CpuProfile);
    const parts = [...selfTimes].sort((a, b) => b[1] - a[1]).map(([name, ms]) => `${name} ${ms.toFixed(0)}`);
    console.log(`\nCPU profile of one import (${join(directory, file!)}), self time in ms: ${parts.join(', ')}`);
  }
} finally {
  if (!options.project) await rm(project, { recursive: true, force: true });
}
