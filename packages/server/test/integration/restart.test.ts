import { findInvariantViolations, graphFromSync } from '@promethea/cpp-protocol';
import type { CPPServer } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import {
  chunksReceived,
  completion,
  listThreads,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase, type TemporaryDatabase } from '../support/temporary-database.js';

const DID = 'did:key:zRestart';
let database: TemporaryDatabase;
const running: Array<{ server: CPPServer; store: SqliteStore; client: RawClient }> = [];

beforeEach(() => {
  database = temporaryDatabase();
});

afterEach(async () => {
  for (const instance of running.splice(0)) await stop(instance);
  database.remove();
});

/** A server on the test's database file, and a client of it. */
async function run(model: ScriptedModel, persistIntervalMs?: number) {
  const store = SqliteStore.open(database.path);
  const server = await startServer({ store, model, persistIntervalMs });
  const client = await RawClient.connect(server.url, { did: DID });
  const instance = { server, store, client };
  running.push(instance);
  return instance;
}

async function stop(instance: Awaited<ReturnType<typeof run>>): Promise<void> {
  running.splice(running.indexOf(instance), 1);
  await instance.client.close();
  await instance.server.close();
  await instance.store.close();
  expect(instance.client.invalid).toEqual([]);
}

describe('a restart on the same SQLite file', () => {
  it('brings every thread back identical', async () => {
    const answers = [
      { chunks: ['Paris', ' is', ' lovely'] },
      { chunks: ['Rome', ' then'], gated: false },
      { chunks: ['Stopped', ' here', ' now'] },
    ];
    const model = new ScriptedModel((callIndex) => answers[callIndex % answers.length]!);
    const first = await run(model);
    const { client } = first;
    const { threadId } = await openThread(client, { patches: true });
    const trip = await prompt(client, threadId, 'Where should I go? 🌍');
    (await model.call(0)).release(2);
    await chunksReceived(client, trip.assistantNodeId, 2);
    const rome = await pivot(client, threadId, trip.assistantNodeId, 'Italy instead', { receivedContentLength: 7 });
    await completion(client, threadId, rome.assistantNodeId);
    client.send('CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: trip.userNodeId });
    await nextUpdate(client, threadId, (update) => update.activeHeadMessageId === trip.userNodeId);
    const stopped = await prompt(client, threadId, 'Or stay home?');
    (await model.call(2)).release(1);
    await chunksReceived(client, stopped.assistantNodeId, 1);
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: stopped.assistantNodeId });
    await nextUpdate(client, threadId, (update) => update.nodes[stopped.assistantNodeId]?.status === 'interrupted');
    const { threadId: emptyThreadId } = await openThread(client);

    const before = {
      thread: await requestSync(client, threadId),
      empty: await requestSync(client, emptyThreadId),
      list: await listThreads(client),
    };
    expect(findInvariantViolations(graphFromSync(before.thread))).toEqual([]);
    await stop(first);

    const second = await run(new ScriptedModel({ chunks: ['unused'] }));
    expect(await openThread(second.client, { threadId })).toEqual(before.thread);
    expect(await openThread(second.client, { threadId: emptyThreadId })).toEqual(before.empty);
    expect(await listThreads(second.client)).toEqual(before.list);
  });

  it('persists the streamed text in batches while it streams, without changing the version', async () => {
    const model = new ScriptedModel({ chunks: ['One', ' two', ' three', ' four'] });
    const { client } = await run(model, 5);
    const reader = SqliteStore.open(database.path);
    try {
      const { threadId } = await openThread(client, { patches: true });
      const { assistantNodeId } = await prompt(client, threadId, 'Count');
      const call = await model.call(0);
      const stored = async () => (await reader.loadThread(threadId))!.graph;
      const persisted = (text: string) =>
        eventually(
          async () => ((await stored()).nodes[assistantNodeId]?.content === text ? true : undefined),
          `"${text}" persisted`,
        );

      call.release(2);
      await chunksReceived(client, assistantNodeId, 2);
      await persisted(streamedText(client, assistantNodeId));
      expect((await stored()).version).toBe(1);
      expect((await stored()).nodes[assistantNodeId]?.status).toBe('streaming');

      call.release(1);
      await chunksReceived(client, assistantNodeId, 3);
      await persisted('One two three');
      expect((await stored()).version).toBe(1);

      call.releaseAll();
      await completion(client, threadId, assistantNodeId);
      expect((await stored()).nodes[assistantNodeId]).toMatchObject({
        status: 'completed',
        content: 'One two three four',
      });
      expect((await stored()).version).toBe(2);
    } finally {
      await reader.close();
    }
  });
});
