import {
  ErrorCode,
  findInvariantViolations,
  firstPrompts,
  newMessageId,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { MemoryStore, type ConversationStore } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { describeWithPostgres, TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import { completion, expectError, nextUpdate, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread, type StreamingThread } from '../support/streaming-thread.js';
import { temporaryDatabase } from '../support/temporary-database.js';
import { mirrorOf } from '../support/thread-mirror.js';

const CHUNKS = ['Clojure ', 'is ', 'a ', 'Lisp.'];

/** Regenerate and delete a branch (PROTOCOL.md §24) over a real WebSocket, on a server keeping its threads in `open()`. */
function describeTreeOperations(storeName: string, open: () => Promise<ConversationStore>): void {
  describe(`regenerate and delete a branch on ${storeName}`, () => {
    const fixture = useServer();
    const stores: ConversationStore[] = [];
    afterEach(async () => {
      // The server keeps its running answers in the store as it closes: it goes first (closing it again is a no-op).
      if (stores.length > 0) await fixture.server.close();
      for (const store of stores.splice(0)) await store.close();
    });

    const streaming = async (sent: number): Promise<StreamingThread & { store: ConversationStore }> => {
      const store = await open();
      stores.push(store);
      return { ...(await startStreamingThread(fixture, CHUNKS, sent, { store })), store };
    };

    /** The stored tree, sound, and equal to what the client's frames build. */
    const expectStoredAsMirrored = async (
      setup: { store: ConversationStore } & Pick<StreamingThread, 'client' | 'threadId'>,
    ): Promise<ThreadGraph> => {
      const stored = (await setup.store.loadThread(setup.threadId))!.graph;
      expect(findInvariantViolations(stored)).toEqual([]);
      expect(mirrorOf(setup.client.frames, setup.threadId)).toEqual({ graph: stored, problems: [] });
      return stored;
    };

    const regenerate = (setup: StreamingThread, fields: Record<string, unknown> = {}) => {
      const newNodeId = newMessageId();
      setup.client.send(
        'CPP_REGENERATE',
        { activeThreadId: setup.threadId, userNodeId: setup.userNodeId, newNodeId, ...fields },
        { id: 'regenerate-frame' },
      );
      return newNodeId;
    };

    it('regenerates a finished answer beside it, from the path to its prompt alone', async () => {
      const setup = await streaming(0);
      setup.call.releaseAll();
      await completion(setup.client, setup.threadId, setup.assistantNodeId);

      const newNodeId = regenerate(setup, { expectedVersion: 2 });
      const update = await nextUpdate(
        setup.client,
        setup.threadId,
        (candidate) => candidate.nodes[newNodeId] !== undefined,
      );
      expect(update).toMatchObject({ version: 3, activeHeadMessageId: newNodeId });
      expect(update.nodes[setup.userNodeId]?.childrenIds).toEqual([setup.assistantNodeId, newNodeId]);
      await completion(setup.client, setup.threadId, newNodeId);

      expect((await setup.model.call(1)).messages).toEqual([{ role: 'user', content: 'Tell me about Clojure' }]);
      const stored = await expectStoredAsMirrored(setup);
      expect(stored.nodes[setup.assistantNodeId]).toMatchObject({ status: 'completed', content: CHUNKS.join('') });
      expect(stored.nodes[newNodeId]).toMatchObject({ status: 'completed', content: 'New answer' });
    });

    it('halts the answer streaming under the prompt as a pivot does, and answers an exact retry with a sync', async () => {
      const setup = await streaming(2);
      const newNodeId = regenerate(setup, { receivedContentLength: 9 });
      const update = await nextUpdate(
        setup.client,
        setup.threadId,
        (candidate) => candidate.nodes[newNodeId] !== undefined,
      );

      expect(setup.call.signal.aborted).toBe(true);
      expect(setup.client.all('CPP_STREAM_HALTED').map((frame) => frame.payload)).toEqual([
        {
          interruptedNodeId: setup.assistantNodeId,
          finalContentLength: 9,
          lastChunkReceived: 'i',
          threadId: setup.threadId,
          reason: 'regenerate',
        },
      ]);
      expect(update.version).toBe(2);
      expect(update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Clojure i' });
      await completion(setup.client, setup.threadId, newNodeId);
      expect((await setup.model.call(1)).messages).toEqual([{ role: 'user', content: 'Tell me about Clojure' }]);

      setup.client.send('CPP_REGENERATE', {
        activeThreadId: setup.threadId,
        userNodeId: setup.userNodeId,
        newNodeId,
        expectedVersion: 1,
      });
      const sync = await setup.client.next('CPP_SYNC_GRAPH', (frame) => frame.payload.version === 3);
      expect(sync.payload.nodes[setup.userNodeId]?.childrenIds).toEqual([setup.assistantNodeId, newNodeId]);
      expect(setup.model.calls).toHaveLength(2);
      await expectStoredAsMirrored(setup);
    });

    it('refuses a regenerate of an answer or with a used id, changing nothing', async () => {
      const setup = await streaming(1);
      setup.client.send('CPP_REGENERATE', {
        activeThreadId: setup.threadId,
        userNodeId: setup.assistantNodeId,
        newNodeId: newMessageId(),
      });
      await expectError(setup.client, ErrorCode.INVALID_NODE);
      setup.client.send('CPP_REGENERATE', {
        activeThreadId: setup.threadId,
        userNodeId: setup.userNodeId,
        newNodeId: setup.userNodeId,
      });
      await expectError(setup.client, ErrorCode.CONFLICT);
      setup.call.releaseAll();
      await completion(setup.client, setup.threadId, setup.assistantNodeId);
      expect((await expectStoredAsMirrored(setup)).version).toBe(2);
      expect(setup.call.signal.aborted).toBe(false);
    });

    it('refuses with THREAD_BUSY a regenerate of another prompt while an answer streams', async () => {
      const store = await open();
      stores.push(store);
      const model = new ScriptedModel({ chunks: CHUNKS });
      await fixture.start({ model, store });
      const client = await fixture.connect();
      const { threadId } = await openThread(client, { patches: true });
      const first = await prompt(client, threadId, 'Tell me about Clojure');
      (await model.call(0)).releaseAll();
      await completion(client, threadId, first.assistantNodeId);
      const second = await prompt(client, threadId, 'And Scheme?');

      client.send('CPP_REGENERATE', {
        activeThreadId: threadId,
        userNodeId: first.userNodeId,
        newNodeId: newMessageId(),
      });
      await expectError(client, ErrorCode.THREAD_BUSY, { refType: 'CPP_REGENERATE' });
      (await model.call(1)).releaseAll();
      await completion(client, threadId, second.assistantNodeId);
      expect(model.calls).toHaveLength(2);
      expect((await expectStoredAsMirrored({ store, client, threadId })).version).toBe(4);
    });

    it('deletes a finished branch and its text; the head inside moves to the parent; it stays deleted', async () => {
      const setup = await streaming(0);
      setup.call.releaseAll();
      await completion(setup.client, setup.threadId, setup.assistantNodeId);
      const kept = await prompt(setup.client, setup.threadId, 'And Scheme?');
      await completion(setup.client, setup.threadId, kept.assistantNodeId);
      const doomed = await prompt(setup.client, setup.threadId, 'And Racket?', { parentNodeId: setup.assistantNodeId });
      await completion(setup.client, setup.threadId, doomed.assistantNodeId);

      setup.client.send('CPP_BRANCH_DELETE', {
        activeThreadId: setup.threadId,
        nodeId: doomed.userNodeId,
        expectedVersion: 6,
      });
      const update = await nextUpdate(setup.client, setup.threadId, (candidate) => candidate.version === 7);
      expect(update).toEqual({
        threadId: setup.threadId,
        version: 7,
        rootNodeId: setup.userNodeId,
        activeHeadMessageId: setup.assistantNodeId,
        nodes: { [setup.assistantNodeId]: expect.objectContaining({ childrenIds: [kept.userNodeId] }) },
        removedNodeIds: expect.arrayContaining([doomed.userNodeId, doomed.assistantNodeId]),
        title: 'Tell me about Clojure',
      });
      const stored = await expectStoredAsMirrored(setup);
      expect(Object.keys(stored.nodes)).toHaveLength(4);
      expect(await setup.store.findNodeThread(doomed.assistantNodeId)).toBeUndefined();
      expect((await requestSync(setup.client, setup.threadId)).nodes[doomed.userNodeId]).toBeUndefined();

      setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: doomed.userNodeId });
      await expectError(setup.client, ErrorCode.NOT_FOUND, { refType: 'CPP_BRANCH_DELETE' });
    });

    it('edits the first prompt: a first prompt beside it, answered from itself alone, kept across a reload', async () => {
      const setup = await streaming(0);
      setup.call.releaseAll();
      await completion(setup.client, setup.threadId, setup.assistantNodeId);
      const followUp = await prompt(setup.client, setup.threadId, 'And Scheme?');
      await completion(setup.client, setup.threadId, followUp.assistantNodeId);

      const edit = await prompt(setup.client, setup.threadId, 'Tell me about Racket', {
        parentNodeId: null,
        expectedVersion: 4,
      });
      // The update that added the edit, taken by `prompt` on its way.
      const update = setup.client.all('CPP_GRAPH_PATCH').find((frame) => frame.payload.version === 5)!.payload;
      expect(update).toMatchObject({ rootNodeId: edit.userNodeId, activeHeadMessageId: edit.assistantNodeId });
      expect(update.nodes[edit.userNodeId]).toMatchObject({ parentId: null, content: 'Tell me about Racket' });
      await completion(setup.client, setup.threadId, edit.assistantNodeId);
      expect((await setup.model.call(2)).messages).toEqual([{ role: 'user', content: 'Tell me about Racket' }]);

      // An exact retry of the edit is answered with a sync; a first prompt's id under a parent is another message.
      setup.client.send('CPP_PROMPT', {
        activeThreadId: setup.threadId,
        userPrompt: 'Tell me about Racket',
        newNodeId: edit.userNodeId,
        parentNodeId: null,
      });
      expect((await setup.client.next('CPP_SYNC_GRAPH')).payload.version).toBe(6);
      setup.client.send('CPP_PROMPT', {
        activeThreadId: setup.threadId,
        userPrompt: 'Tell me about Racket',
        newNodeId: edit.userNodeId,
        parentNodeId: setup.assistantNodeId,
      });
      await expectError(setup.client, ErrorCode.CONFLICT, { refType: 'CPP_PROMPT' });

      // Anchoring the first version's answer brings its branch, and its first prompt as the root, back.
      setup.client.send('CPP_ANCHOR_HEAD', { activeThreadId: setup.threadId, targetNodeId: followUp.assistantNodeId });
      expect(await nextUpdate(setup.client, setup.threadId, (candidate) => candidate.version === 7)).toMatchObject({
        rootNodeId: setup.userNodeId,
        activeHeadMessageId: followUp.assistantNodeId,
      });
      const stored = await expectStoredAsMirrored(setup);
      expect(firstPrompts(stored).map((node) => node.id)).toEqual([setup.userNodeId, edit.userNodeId]);
      expect((await requestSync(setup.client, setup.threadId)).title).toBe('Tell me about Clojure');

      // A version of the first prompt is deleted like any branch; the only one left is not.
      setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: setup.userNodeId });
      expect(await nextUpdate(setup.client, setup.threadId, (candidate) => candidate.version === 8)).toMatchObject({
        rootNodeId: edit.userNodeId,
        activeHeadMessageId: edit.assistantNodeId,
      });
      setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: edit.userNodeId });
      await expectError(setup.client, ErrorCode.INVALID_NODE);
      await expectStoredAsMirrored(setup);
    });

    it('refuses to delete the root, a streaming branch or with a stale version, changing nothing', async () => {
      const setup = await streaming(1);
      setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: setup.userNodeId });
      await expectError(setup.client, ErrorCode.INVALID_NODE);
      setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: setup.assistantNodeId });
      await expectError(setup.client, ErrorCode.THREAD_BUSY);
      setup.client.send('CPP_BRANCH_DELETE', {
        activeThreadId: setup.threadId,
        nodeId: setup.assistantNodeId,
        expectedVersion: 0,
      });
      await expectError(setup.client, ErrorCode.CONFLICT);
      setup.call.releaseAll();
      await completion(setup.client, setup.threadId, setup.assistantNodeId);
      expect((await expectStoredAsMirrored(setup)).version).toBe(2);
    });
  });
}

describeTreeOperations('the memory store', async () => new MemoryStore());

const databases: Array<{ remove(): void }> = [];
afterEach(() => {
  for (const database of databases.splice(0)) database.remove();
});
describeTreeOperations('SQLite', async () => {
  const database = temporaryDatabase();
  databases.push(database);
  return SqliteStore.open(database.path);
});

describeWithPostgres('PostgreSQL', () => {
  const schemas = useTestSchemas();
  describeTreeOperations('PostgreSQL', () =>
    PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema: schemas.create() }),
  );
});
