// `npm run walk:pivot`: follows one pivot through the server's code, as a reader stepping through it would, and counts
// the files of ours it enters and how often control comes back to a file it had already left (docs/ARCHITECTURE.md,
// "One pivot, through the code"). `--verbose` prints the walk, one line per stay in a file.
//
// A real CPPServer (memory store, a model scripted here) listens on a free port; a bare `ws` client prompts, and once
// two chunks of the answer arrived it sends CPP_PIVOT_INIT. A worker thread debugs this thread through node:inspector
// with a breakpoint on every location V8 can pause at (statements, calls and returns) in every module of
// packages/protocol and packages/server (their `tsc` output, one .js per .ts), so that each pause names the file
// control is in, awaits and returns included. The walk starts at the session's first statement after
// `decodeClientFrame` returns the pivot and ends when the new answer's first CPP_STREAM_CHUNK is handed to `ws`.
// The stream persister's batch interval is set long so that its timer, which no pivot waits for, stays out of it.
import { register } from 'node:module';
import { Worker } from 'node:worker_threads';

const root = new URL('../', import.meta.url);
const verbose = process.argv.includes('--verbose');

// The protocol package's `node` export is its bundle; its per-file build keeps the walk's files apart.
register(
  `data:text/javascript,${encodeURIComponent(`
    export async function resolve(specifier, context, next) {
      if (specifier === '@promethea/cpp-protocol')
        return { url: ${JSON.stringify(new URL('packages/protocol/dist/index.js', root).href)}, shortCircuit: true };
      return next(specifier, context);
    }`)}`,
);

/** The debugger, on a thread of its own: the main thread stops at every breakpoint until the worker resumes it. */
const tracer = String.raw`
const { parentPort, workerData } = require('node:worker_threads');
const { Session } = require('node:inspector');
const session = new Session();
session.connectToMainThread();
const post = (method, params = {}) =>
  new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
const ours = /\/packages\/(protocol|server)\/dist\/.*\.js$/;
const scripts = new Map();
session.on('Debugger.scriptParsed', ({ params }) => {
  if (ours.test(params.url)) scripts.set(params.scriptId, params);
});
let recording = false;
const hits = [];
session.on('Debugger.paused', async ({ params }) => {
  const frame = params.callFrames[0];
  if (recording) {
    // A module's call frames leave \`url\` empty: the script it was parsed as names it.
    const url = scripts.get(frame.location.scriptId)?.url ?? '';
    hits.push({ url, line: frame.location.lineNumber, name: frame.functionName });
    if (url.endsWith('/transport/ws-transport.js') && frame.functionName === 'send') {
      const { result } = await post('Debugger.evaluateOnCallFrame', {
        callFrameId: frame.callFrameId,
        expression: 'typeof text === "string" && text.includes("\\"CPP_STREAM_CHUNK\\"")',
      });
      if (result.value === true) {
        recording = false;
        await post('Debugger.setBreakpointsActive', { active: false });
        parentPort.postMessage({ hits });
      }
    }
  }
  await post('Debugger.resume');
});
parentPort.on('message', async (message) => {
  if (message !== 'arm') return;
  for (const { scriptId, endLine } of scripts.values()) {
    const { locations } = await post('Debugger.getPossibleBreakpoints', {
      start: { scriptId, lineNumber: 0, columnNumber: 0 },
      end: { scriptId, lineNumber: endLine + 1, columnNumber: 0 },
    });
    for (const location of locations)
      await post('Debugger.setBreakpoint', { location: { scriptId, lineNumber: location.lineNumber, columnNumber: location.columnNumber } });
  }
  recording = true;
  parentPort.postMessage('armed');
});
post('Debugger.enable').then(() => parentPort.postMessage('ready'));
`;

const worker = new Worker(tracer, { eval: true });
const fromWorker = (predicate) =>
  new Promise((resolve) => {
    const listener = (message) => {
      if (!predicate(message)) return;
      worker.off('message', listener);
      resolve(message);
    };
    worker.on('message', listener);
  });
await fromWorker((message) => message === 'ready');

const { CPPServer } = await import(new URL('packages/server/dist/index.js', root).href);
const { CPP_SUBPROTOCOL, newMessageId } = await import(new URL('packages/protocol/dist/index.js', root).href);
const { default: WebSocket } = await import('ws');

/** The first answer streams a chunk and then waits to be aborted; the pivot's answer streams as fast as it can. */
const model = {
  provider: 'scripted',
  model: 'scripted-model',
  calls: 0,
  async *stream({ signal }) {
    this.calls += 1;
    if (this.calls === 1) {
      yield { type: 'text-delta', text: 'Hello world' };
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      return;
    }
    yield { type: 'text-delta', text: 'Rust' };
    yield { type: 'finish', finishReason: 'stop' };
  },
};

const server = new CPPServer({ port: 0, host: '127.0.0.1', model, persistIntervalMs: 3_600_000 });
await server.ready;
const socket = new WebSocket(server.url, [CPP_SUBPROTOCOL]);
const frames = [];
const waiters = [];
socket.on('message', (data) => {
  const frame = JSON.parse(String(data));
  frames.push(frame);
  for (const waiter of waiters.splice(0)) if (!waiter(frame)) waiters.push(waiter);
});
const receive = (predicate) =>
  new Promise((resolve) => {
    const seen = frames.find(predicate);
    if (seen) return resolve(seen);
    waiters.push((frame) => {
      if (!predicate(frame)) return false;
      resolve(frame);
      return true;
    });
  });
const send = (type, payload) => socket.send(JSON.stringify({ type, timestamp: Date.now(), payload }));
await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));

send('CPP_THREAD_OPEN', {});
const { threadId } = (await receive((frame) => frame.type === 'CPP_SYNC_GRAPH')).payload;
send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: 'Tell me about Go', newNodeId: newMessageId() });
const chunks = (frame) => frame.type === 'CPP_STREAM_CHUNK';
const interruptedNodeId = (await receive(chunks)).payload.nodeId;

// The session's first statement after the decode, in its built module: where the walk starts.
const sessionModule = new URL('packages/server/dist/session/connection-session.js', root);
const sessionLines = (await import('node:fs')).readFileSync(sessionModule, 'utf8').split('\n');
const decodeLine = sessionLines.findIndex((line) => line.includes('decodeClientFrame(data)'));
if (decodeLine === -1) throw new Error('walk:pivot: connection-session.js no longer calls decodeClientFrame(data)');

worker.postMessage('arm');
await fromWorker((message) => message === 'armed');
const walked = fromWorker((message) => typeof message === 'object' && 'hits' in message);
send('CPP_PIVOT_INIT', {
  activeThreadId: threadId,
  interruptedNodeId,
  userPrompt: 'Rust instead',
  newBranchNodeId: newMessageId(),
});
const { hits } = await walked;
await receive((frame) => frame.type === 'CPP_STREAM_COMPLETED' && frame.payload.nodeId !== interruptedNodeId);
socket.close();
await server.close();
await worker.terminate();

const start = hits.findIndex((hit) => hit.url === sessionModule.href && hit.line > decodeLine);
const walk = hits.slice(start);
const source = (url) => url.slice(root.href.length).replace('/dist/', '/src/').replace(/\.js$/, '.ts');
/**
 * The units entered and the returns to a unit already left, of the walk with each file counted as the unit `unitOf`
 * names (skipped where it names none).
 */
function figures(unitOf) {
  const stays = [];
  for (const hit of walk) {
    const unit = unitOf(source(hit.url));
    if (unit === undefined) continue;
    const last = stays.at(-1);
    if (last?.unit === unit) {
      if (hit.name && !last.functions.includes(hit.name)) last.functions.push(hit.name);
    } else stays.push({ unit, functions: hit.name ? [hit.name] : [] });
  }
  const units = new Set(stays.map((stay) => stay.unit));
  return { stays, units, returns: stays.length - units.size };
}
/** A file's layer (docs/ARCHITECTURE.md): the protocol package, or the server's folder it is in, or the file itself. */
const layerOf = (file) =>
  file.startsWith('packages/protocol/')
    ? 'protocol'
    : (/^packages\/server\/src\/([^/]+)\//.exec(file)?.[1] ?? file.slice('packages/server/src/'.length));
const all = figures((file) => file);
const engine = figures((file) => (file.startsWith('packages/server/src/engine/') ? file : undefined));
const layers = figures(layerOf);
if (verbose) {
  for (const [index, stay] of all.stays.entries())
    console.log(`${index + 1}. ${stay.unit} (${stay.functions.join(', ')})`);
  console.log(`\nfiles:\n${[...all.units].join('\n')}\n`);
  console.log(`layers:\n${[...layers.units].join('\n')}\n`);
}
console.log("pivot walk, from the decoded CPP_PIVOT_INIT to the new answer's first CPP_STREAM_CHUNK:");
console.log(`  every file of ours: ${all.units.size} files entered, ${all.returns} returns to a file already left`);
console.log(`  (${walk.length} pauses; protocol, session, auth, transport, store and observability included)`);
console.log(`  engine/ alone: ${engine.units.size} files entered, ${engine.returns} returns to a file already left`);
console.log('  (the walk as it passes through packages/server/src/engine: a call out of it and back is no return)');
console.log(`  by layer: ${layers.units.size} layers entered, ${layers.returns} returns to a layer already left`);
console.log('  (each layer counted as one file: the protocol package, each folder of packages/server/src)');
