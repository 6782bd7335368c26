import { Socket } from 'node:net';
import { createModelProvider } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sse, startReplayServer } from '../model/replay-server.js';
import { completion, openThread, prompt } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

const MODELS = ['first', 'second', 'third'];

const ANSWER = [
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] })}\n\n`,
  `data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
  'data: [DONE]\n\n',
].join('');

const cleanups: Array<() => unknown> = [];

afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the model requests of a prompt answered side by side', () => {
  it('are written before the commit that creates the answers, on a store that commits synchronously', async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const upstream = await startReplayServer(sse(ANSWER));
    cleanups.push(() => upstream.close());
    const store = SqliteStore.open(database.path);
    cleanups.push(() => store.close());
    const server = await startServer({
      store,
      models: MODELS.map((id) => ({
        id,
        label: id,
        provider: createModelProvider({ provider: 'openai-compatible', baseUrl: upstream.url, model: id }),
      })),
    });
    cleanups.push(() => server.close());
    const client = await RawClient.connect(server.url);
    cleanups.push(() => client.close());
    const { threadId } = await openThread(client, { patches: true });
    const answered = async (text: string) => {
      const { update, userNodeId } = await prompt(client, threadId, text, { models: MODELS });
      for (const nodeId of update.nodes[userNodeId]!.childrenIds) await completion(client, threadId, nodeId);
    };
    // The first prompt opens the connections to the model server, which the next one's requests reuse: a request on
    // a new connection waits for it to open, whatever the commit does.
    await answered('Hello');

    const writes = vi.spyOn(Socket.prototype, 'write');
    const commits = vi.spyOn(store, 'commit');
    await answered('Again');
    const port = Number(new URL(upstream.url).port);
    const toUpstream = writes.mock.contexts.flatMap((socket, index) =>
      (socket as Socket).remotePort === port ? [writes.mock.invocationCallOrder[index]!] : [],
    );
    const sockets = new Set(writes.mock.contexts.filter((socket) => (socket as Socket).remotePort === port));
    expect(sockets.size).toBe(MODELS.length);
    // The prompt's commit is the first; the answers' ends are committed after.
    const promptCommit = commits.mock.invocationCallOrder[0]!;
    expect(toUpstream.filter((order) => order > promptCommit)).toEqual([]);
    expect(upstream.requests).toHaveLength(2 * MODELS.length);
  });
});
