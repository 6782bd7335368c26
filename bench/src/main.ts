import { mkdirSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { BenchContext, PROFILE_DIRECTORY } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import type { Figure } from './figure.js';
import { openFileLimit } from './file-limit.js';
import { measureCapacity } from './measure-capacity.js';
import { measureContext } from './measure-context.js';
import { measureFanout } from './measure-fanout.js';
import { measureModels } from './measure-models.js';
import { measureGateway } from './measure-gateway.js';
import { measureMemory } from './measure-memory.js';
import { AT_CAPACITY_80, measurePivot } from './measure-pivot.js';
import { measureScale } from './measure-scale.js';
import { measureSync } from './measure-sync.js';
import { measureTools } from './measure-tools.js';
import { measureUpload } from './measure-upload.js';
import { parseOptions } from './options.js';
import { benchResult, formatTable, writeResult } from './report.js';

/** The share of CPP's capacity at which pivots are timed again, within what the server holds. */
const CAPACITY_SHARE = 0.8;
/** File descriptors beyond the connections: the runtime's own, SQLite's, IPC. */
const SPARE_FILES = 200;

const options = parseOptions(process.argv.slice(2), process.env);
const connectionsNeeded = Math.max(options.idleConnections, options.capacityMax, ...options.loads) + SPARE_FILES;
const limit = openFileLimit();
if (limit !== undefined && limit < connectionsNeeded) {
  console.error(
    `The open-file limit is ${limit}; this run needs ${connectionsNeeded}. Raise it first: ulimit -n ${connectionsNeeded}`,
  );
  process.exit(1);
}

if (options.profile) mkdirSync(PROFILE_DIRECTORY, { recursive: true });
const startedAt = Date.now();
const startLoad = loadavg()[0]!;
if (startLoad > cpus().length)
  console.error(
    `Warning: the load average is ${startLoad.toFixed(1)} on ${cpus().length} CPUs; other work will make the figures noisy.`,
  );
const load = await BenchProcess.start('./load-process.js', []);
const context = new BenchContext(options, load);
const figures: Figure[] = [];
const details: Record<string, unknown> = {};
try {
  const withSse = options.peers.includes('sse');
  if (options.only.includes('pivot')) {
    for (const streams of options.loads) await collect(`pivot.${streams}`, measurePivot(context, { streams, withSse }));
  }
  if (options.only.includes('gateway')) await collect('gateway', measureGateway(context));
  if (options.only.includes('capacity')) {
    const capacity = await collect('capacity', measureCapacity(context));
    // Pivots within what the server holds: at 80 % of the capacity it showed in this run.
    const streams = Math.round(CAPACITY_SHARE * (capacity?.cppStreams ?? 0));
    if (options.only.includes('pivot')) {
      if (streams > 0)
        await collect(
          `pivot.${AT_CAPACITY_80}`,
          measurePivot(context, { streams, name: AT_CAPACITY_80, withSse: false }),
        );
      else context.log(`pivot at 80 % of capacity: not measured, CPP held no load in this run`);
    }
  }
  if (options.only.includes('memory')) await collect('memory', measureMemory(context));
  if (options.only.includes('sync')) await collect('sync', measureSync(context));
  if (options.only.includes('scale')) await collect('scale', measureScale(context));
  if (options.only.includes('context')) await collect('context', measureContext(context));
  if (options.only.includes('models')) await collect('models', measureModels(context));
  if (options.only.includes('tools')) await collect('tools', measureTools(context));
  if (options.only.includes('fanout')) await collect('fanout', measureFanout(context));
  if (options.only.includes('upload')) await collect('upload', measureUpload(context));
} finally {
  await load.stop();
}

writeResult(options.out, benchResult(options, figures, details, startLoad));
console.log(formatTable(figures));
console.log(
  `\n${figures.filter((line) => line.target?.met).length} of ${figures.filter((line) => line.target).length} targets met · ${options.runs} run(s), medians · ${Math.round((Date.now() - startedAt) / 1000)} s · figures in ${options.out}`,
);

/** A measure that fails is on record in the details; the others still report. */
async function collect<Result extends { figures: Figure[]; details: unknown }>(
  name: string,
  measure: Promise<Result>,
): Promise<Result | undefined> {
  try {
    const result = await measure;
    figures.push(...result.figures);
    details[name] = result.details;
    return result;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    details[name] = { failed: message };
    context.log(`${name} failed: ${message}`);
    return undefined;
  }
}
