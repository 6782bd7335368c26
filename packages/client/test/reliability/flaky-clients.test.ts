import { CPPClient, type GenerationResult } from '@promethea/cpp-client';
import { DEFAULT_CHUNK_INTERVAL_MS, DemoProvider } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { soakSize } from '../../../../test/support/soak-size.js';
import { streamedAtLeast } from '../../../../reliability/src/stream-waits.js';
import { TcpProxy } from '../support/tcp-proxy.js';

/**
 * Many clients talking to one server through a TCP proxy that cuts their connections at random while answers
 * stream. Each thread has an actor (prompts, pivots) and a watcher (only reads). Every client reconnects by itself,
 * and in the end every one of them holds exactly the server's tree, and no answer showed text twice or lost any.
 * 4 threads of 2 rounds in `npm test`, 8 of 4 under `npm run test:soak`; CPP_FLAKY_THREADS and CPP_FLAKY_ROUNDS
 * scale it further.
 */
const THREADS = soakSize('CPP_FLAKY_THREADS', { sample: 4, full: 8 });
const ROUNDS = soakSize('CPP_FLAKY_ROUNDS', { sample: 2, full: 4 });
/** The chance that any chunk a client receives triggers the cut of one connection (any client's). */
const CUT_CHANCE = 0.03;

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Answer {
  result: GenerationResult;
  /** Everything onStream delivered, joined. */
  delivered: string;
  /** The actor pivoted away from this answer while it streamed. */
  pivoted: boolean;
}

describe('clients whose connections are cut at random while streaming', () => {
  it("each end with exactly the server's text for every node", { timeout: 180_000 }, async () => {
    // Chunks paced as in production: a cut may come with any of them.
    const server = await startServer({
      model: new DemoProvider({ delayMs: 2, words: 80 }),
      chunkIntervalMs: DEFAULT_CHUNK_INTERVAL_MS,
    });
    cleanups.push(() => server.close());
    const proxy = await TcpProxy.start(server.port);
    cleanups.push(() => proxy.close());
    const figures = { reconnects: 0, chunks: 0, errors: [] as unknown[] };
    let chaos = true;

    const connect = () => {
      const client = new CPPClient({
        endpoint: `ws://127.0.0.1:${proxy.port}`,
        reconnect: { initialDelayMs: 5, maxDelayMs: 50 },
      });
      cleanups.push(() => client.close());
      client.on('error', (error) => figures.errors.push(error));
      client.on('status', (status) => status === 'reconnecting' && (figures.reconnects += 1));
      client.on('chunk', () => {
        figures.chunks += 1;
        if (chaos && Math.random() < CUT_CHANCE) proxy.cutOne();
      });
      return client;
    };

    const threads = await Promise.all(
      Array.from({ length: THREADS }, async () => {
        const actor = connect();
        const { threadId } = await actor.openThread();
        const watcher = connect();
        await watcher.openThread(threadId);
        return { threadId, actor, watcher };
      }),
    );
    const started = Date.now();
    const answers = (await Promise.all(threads.map(({ actor, threadId }) => play(actor, threadId)))).flat();
    chaos = false;

    const reference = new CPPClient({ endpoint: server.url, reconnect: false });
    cleanups.push(() => reference.close());
    for (const { threadId, actor, watcher } of threads) {
      const truth = await reference.openThread(threadId);
      for (const client of [actor, watcher]) {
        await client.ready();
        // A round trip: every frame the server sent this client before it answers has arrived.
        await client.listThreads();
        expect(client.graph(threadId)).toEqual(truth);
      }
    }
    for (const { result, delivered, pivoted } of answers) {
      if (!pivoted || result.status === 'interrupted') expect(delivered).toBe(result.content);
      else expect(result.content.startsWith(delivered)).toBe(true);
    }
    expect(figures.errors).toEqual([]);
    expect(proxy.cuts).toBeGreaterThan(0);
    console.log(
      `flaky clients: ${THREADS * 2} clients on ${THREADS} threads, ${answers.length} answers ` +
        `(${answers.filter((answer) => answer.pivoted).length} pivoted) in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
        `${proxy.cuts} connections cut, ${figures.reconnects} reconnects, ${figures.chunks} chunks received; ` +
        'every client equals the server, no text doubled or missing, 0 errors',
    );
  });
});

/** Prompts round after round; about half of the answers are pivoted away from after a random stretch. */
async function play(actor: CPPClient, threadId: string): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const first = { delivered: '' };
    const answer = actor.prompt({
      threadId,
      userPrompt: `Round ${round}`,
      onStream: (delta) => (first.delivered += delta),
    });
    if (Math.random() < 0.5) {
      answers.push({ result: await answer, delivered: first.delivered, pivoted: false });
      continue;
    }
    await streamedAtLeast(actor, threadId, 5 + Math.floor(Math.random() * 200), answer);
    const second = { delivered: '' };
    const branch = actor.pivot({
      threadId,
      userPrompt: `Pivot ${round}`,
      onStream: (delta) => (second.delivered += delta),
    });
    answers.push({ result: await answer, delivered: first.delivered, pivoted: true });
    answers.push({ result: await branch, delivered: second.delivered, pivoted: false });
  }
  return answers;
}
