import { CPPClient, type GenerationResult } from '@promethea/cpp-client';
import { findInvariantViolations, getNode, type MessageNode, type ThreadGraph } from '@promethea/cpp-protocol';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { soakSize } from '../../../../test/support/soak-size.js';
import { streamedAtLeast } from '../../../../reliability/src/stream-waits.js';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

/**
 * kill -9 of cpp-server in the middle of a stream, restart on the same SQLite file, over and over. One CPPClient
 * lives through all of it, reconnecting by itself. After every crash: the file holds every node the client had
 * seen committed, exactly; after every restart: the tree passes its invariants, the node that was streaming is
 * `interrupted` with the text last persisted (a prefix of what was sent), and the client's pending answer settles
 * with that text. 5 crashes in `npm test`, 50 under `npm run test:soak`; CPP_CRASH_ITERATIONS sets the number.
 */
const ITERATIONS = soakSize('CPP_CRASH_ITERATIONS', { sample: 5, full: 50 });
const SERVER_FLAGS = ['--demo-delay-ms', '2', '--persist-interval-ms', '10', '--heartbeat-interval-ms', '0'];

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Figures {
  crashes: number;
  pivots: number;
  anchors: number;
  /** Nodes found streaming in the file after a crash, recovered as interrupted. */
  recovered: number;
  /** Code units the client had received beyond what was persisted, summed over the crashes. */
  unpersisted: number;
  restartMs: number[];
}

describe('cpp-server under kill -9', () => {
  it(`keeps every tree sound through ${ITERATIONS} crashes mid-stream and restarts`, {
    timeout: 120_000 + ITERATIONS * 12_000,
  }, async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    let server = await start(database.path);
    const port = new URL(server.url).port;
    const client = new CPPClient({ endpoint: server.url, reconnect: { initialDelayMs: 10, maxDelayMs: 50 } });
    cleanups.push(() => client.close());
    const { threadId } = await client.openThread();
    const figures: Figures = { crashes: 0, pivots: 0, anchors: 0, recovered: 0, unpersisted: 0, restartMs: [] };
    const started = Date.now();

    for (let iteration = 0; iteration < ITERATIONS; iteration += 1) {
      await client.ready();
      const answers = await streamSomething(client, threadId, iteration, figures);
      const seen = structuredClone(client.graph(threadId)!);
      await server.kill('SIGKILL');
      figures.crashes += 1;

      const stored = await storedGraph(database.path, threadId);
      expectCommittedKept(seen, stored);
      const streaming = Object.values(stored.nodes).filter((node) => node.status === 'streaming');
      figures.recovered += streaming.length;
      for (const node of streaming)
        figures.unpersisted += Math.max(0, (getNode(seen, node.id)?.content.length ?? 0) - node.content.length);

      const restart = Date.now();
      server = await start(database.path, port);
      const results = await Promise.all(answers);
      await client.ready();
      figures.restartMs.push(Date.now() - restart);
      const recovered = client.graph(threadId)!;
      expectRecovered(stored, recovered);
      for (const result of results) expect(result.content).toBe(getNode(recovered, result.assistantNodeId)?.content);
    }

    await server.kill('SIGTERM');
    const restarts = figures.restartMs.sort((a, b) => a - b);
    console.log(
      `crash loop: ${figures.crashes} kill -9 in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${figures.pivots} pivots, ${figures.anchors} anchors; ${Object.keys(client.graph(threadId)!.nodes).length} nodes in the tree; ` +
        `${figures.recovered} streaming nodes recovered as interrupted; ${figures.unpersisted} code units received but not yet persisted in all; ` +
        `restart to resumed client: median ${restarts[restarts.length >> 1]} ms, max ${restarts.at(-1)} ms; 0 invariant violations`,
    );
  });
});

async function start(databasePath: string, port?: string): Promise<CliServer> {
  const server = await startCliServer(['--db', databasePath, ...SERVER_FLAGS, ...(port ? ['--port', port] : [])]);
  cleanups.push(() => server.kill('SIGKILL'));
  return server;
}

/**
 * Prompts (now and then from an anchored older node), lets the answer stream a random while, and now and then
 * pivots it; returns the pending answers, which settle once the server is back.
 */
async function streamSomething(
  client: CPPClient,
  threadId: string,
  iteration: number,
  figures: Figures,
): Promise<Promise<GenerationResult>[]> {
  const graph = client.graph(threadId)!;
  const earlier = Object.keys(graph.nodes);
  if (earlier.length > 0 && Math.random() < 0.3) {
    await client.anchor(earlier[Math.floor(Math.random() * earlier.length)]!, { threadId });
    figures.anchors += 1;
  }
  const answers = [
    client.prompt({ threadId, userPrompt: `Question ${iteration}: ${Math.random().toString(36).slice(2)}` }),
  ];
  await streamedAtLeast(client, threadId, 5 + Math.floor(Math.random() * 150), answers[0]!);
  if (Math.random() < 0.4) {
    answers.push(client.pivot({ threadId, userPrompt: `Pivot ${iteration}` }));
    figures.pivots += 1;
    await answers[0];
    await streamedAtLeast(client, threadId, 1 + Math.floor(Math.random() * 100), answers[1]!);
  }
  return answers;
}

async function storedGraph(databasePath: string, threadId: string): Promise<ThreadGraph> {
  const store = SqliteStore.open(databasePath);
  try {
    const stored = await store.loadThread(threadId);
    if (!stored) throw new Error(`thread ${threadId} is not in the file`);
    return stored.graph;
  } finally {
    await store.close();
  }
}

/** Every node the client saw committed is in the file as it saw it; text it saw streaming agrees with the file's. */
function expectCommittedKept(seen: ThreadGraph, stored: ThreadGraph): void {
  expect(findInvariantViolations(stored)).toEqual([]);
  expect(stored.version).toBeGreaterThanOrEqual(seen.version);
  for (const node of Object.values(seen.nodes)) {
    const kept = getNode(stored, node.id);
    if (node.status !== 'streaming') expect(kept).toEqual(node);
    else expect(isPrefixPair(node.content, kept!.content), `${node.id} seen and stored text disagree`).toBe(true);
  }
}

/** After the restart: a sound tree, nothing streaming, streaming nodes interrupted at the persisted text, the rest untouched. */
function expectRecovered(stored: ThreadGraph, recovered: ThreadGraph): void {
  expect(findInvariantViolations(recovered)).toEqual([]);
  expect(Object.keys(recovered.nodes).sort()).toEqual(Object.keys(stored.nodes).sort());
  const streaming = Object.values(stored.nodes).filter((node) => node.status === 'streaming');
  expect(recovered.version).toBe(stored.version + (streaming.length > 0 ? 1 : 0));
  for (const node of Object.values(stored.nodes)) {
    const expected: MessageNode = node.status === 'streaming' ? { ...node, status: 'interrupted' } : node;
    expect(getNode(recovered, node.id)).toEqual(expected);
  }
}

function isPrefixPair(a: string, b: string): boolean {
  return a.startsWith(b) || b.startsWith(a);
}
