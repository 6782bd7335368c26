import { CloseCode } from '@promethea/cpp-protocol';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { chunksReceived, nextUpdate, openThread, prompt, streamedText } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase, type TemporaryDatabase } from '../support/temporary-database.js';

let database: TemporaryDatabase;

beforeEach(() => {
  database = temporaryDatabase();
});

afterEach(() => {
  database.remove();
});

describe('server.close()', () => {
  it('halts a running answer with reason shutdown, commits it as interrupted, then closes every connection with 1001', async () => {
    const store = SqliteStore.open(database.path);
    const model = new ScriptedModel({ chunks: ['Half', ' an', ' answer', ' and more'] });
    const server = await startServer({ store, model });
    const [patches, syncs, idle] = await Promise.all([
      RawClient.connect(server.url),
      RawClient.connect(server.url),
      RawClient.connect(server.url),
    ]);
    const { threadId } = await openThread(patches, { patches: true });
    await openThread(syncs, { threadId });
    const { assistantNodeId } = await prompt(patches, threadId, 'Go');
    const call = await model.call(0);
    call.release(3);
    await chunksReceived(patches, assistantNodeId, 3);
    await chunksReceived(syncs, assistantNodeId, 3);

    await server.close();
    expect(call.signal.aborted).toBe(true);
    for (const client of [patches, syncs]) {
      const halted = await client.next('CPP_STREAM_HALTED');
      expect(halted.payload).toEqual({
        interruptedNodeId: assistantNodeId,
        finalContentLength: 'Half an answer'.length,
        lastChunkReceived: ' answer',
        threadId,
        reason: 'shutdown',
      });
      const update = await nextUpdate(client, threadId);
      expect(update).toMatchObject({ version: 2 });
      expect(update.nodes[assistantNodeId]).toMatchObject({
        status: 'interrupted',
        content: streamedText(client, assistantNodeId),
      });
    }
    for (const client of [patches, syncs, idle]) {
      expect(await client.closed).toBe(CloseCode.GOING_AWAY);
      expect(client.closeReason).toBe('server shutting down');
      expect(client.invalid).toEqual([]);
    }
    await store.close();

    const reopened = SqliteStore.open(database.path);
    try {
      const stored = await reopened.loadThread(threadId);
      expect(stored?.graph.version).toBe(2);
      expect(stored?.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Half an answer' });
      expect(await reopened.interruptStreamingNodes(Date.now())).toEqual([]);
    } finally {
      await reopened.close();
    }
  });
});
