import { readFileSync } from 'node:fs';
import { pathToRoot, type ThreadSummary } from '@promethea/cpp-protocol';
import { MemoryStore, type ConversationStore } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import {
  chunksReceived,
  completion,
  expectError,
  listThreads,
  nextUpdate,
  openThread,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import { describeWithPostgres, TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

const chatGptExport = (): unknown[] =>
  JSON.parse(
    readFileSync(new URL('../../../protocol/test/fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'),
  );

/** The operations on whole threads (PROTOCOL.md §25), end to end over a WebSocket, on each kind of store. */
function describeThreadOperations(storeName: string, openStore: () => Promise<ConversationStore>): void {
  describe(`thread operations on ${storeName}`, () => {
    const fixture = useServer();
    // The server closes only a store of its own; these are closed once every server of the file has.
    const stores: ConversationStore[] = [];
    afterAll(() => Promise.all(stores.map((store) => store.close())));
    let store: ConversationStore;

    async function startWith(options: {
      model?: ScriptedModel;
      limits?: { maxNodesPerThread?: number; maxThreadBytes?: number };
    }): Promise<void> {
      store = await openStore();
      stores.push(store);
      await fixture.start({ ...options, store });
    }

    async function start(): Promise<ScriptedModel> {
      const model = new ScriptedModel({ chunks: ['An ', 'answer ', 'about ', 'rivers.'] });
      await startWith({ model });
      return model;
    }

    /** A thread with one completed exchange, opened by `client`. */
    async function answeredThread(client: RawClient, model: ScriptedModel, text: string, call: number) {
      const { threadId } = await openThread(client, { patches: true });
      const exchange = await prompt(client, threadId, text);
      (await model.call(call)).releaseAll();
      await completion(client, threadId, exchange.assistantNodeId);
      return { threadId, ...exchange };
    }

    describe('rename', () => {
      it('gives every subscriber the title as a new version, which a first prompt does not replace', async () => {
        const model = await start();
        const alice = await fixture.connect();
        const tab = await fixture.connect();
        const { threadId } = await openThread(alice, { patches: true });
        await openThread(tab, { threadId });

        alice.send('CPP_THREAD_RENAME', { threadId, title: 'My rivers', expectedVersion: 0 });
        expect(await nextUpdate(alice, threadId)).toEqual({
          threadId,
          version: 1,
          rootNodeId: null,
          activeHeadMessageId: null,
          nodes: {},
          title: 'My rivers',
        });
        expect(await nextUpdate(tab, threadId)).toMatchObject({ version: 1, title: 'My rivers' });

        const { assistantNodeId } = await prompt(alice, threadId, 'Which river is the longest?');
        (await model.call(0)).releaseAll();
        await completion(alice, threadId, assistantNodeId);
        expect((await listThreads(alice)).map(({ title, version }) => ({ title, version }))).toEqual([
          { title: 'My rivers', version: 3 },
        ]);
      });

      it('answers the title it already has with a sync, and a stale version with CONFLICT, changing nothing', async () => {
        await start();
        const alice = await fixture.connect();
        const { threadId } = await openThread(alice, { patches: true });
        alice.send('CPP_THREAD_RENAME', { threadId, title: 'Once' });
        await nextUpdate(alice, threadId);

        alice.send('CPP_THREAD_RENAME', { threadId, title: 'Once', expectedVersion: 0 }, { id: 'retry' });
        expect(await nextUpdate(alice, threadId)).toMatchObject({ version: 1, title: 'Once' });
        alice.send('CPP_THREAD_RENAME', { threadId, title: 'Twice', expectedVersion: 0 }, { id: 'stale' });
        await expectError(alice, 'CONFLICT', { refId: 'stale', refType: 'CPP_THREAD_RENAME' });
        alice.send('CPP_THREAD_RENAME', { threadId, title: '   ' }, { id: 'blank' });
        await expectError(alice, 'INVALID_FRAME', { refId: 'blank' });
        expect(await requestSync(alice, threadId)).toMatchObject({ version: 1, title: 'Once' });
      });
    });

    describe('delete', () => {
      it('removes the thread, tells every subscriber and unsubscribes it; a retry is answered the same', async () => {
        const model = await start();
        const alice = await fixture.connect();
        const tab = await fixture.connect();
        const remover = await fixture.connect();
        const { threadId } = await answeredThread(alice, model, 'Rivers of Europe', 0);
        await openThread(tab, { threadId });

        remover.send('CPP_THREAD_DELETE', { threadId, expectedVersion: 2 }, { id: 'delete-1' });
        for (const client of [alice, tab, remover])
          expect((await client.next('CPP_THREAD_DELETED')).payload).toEqual({ threadId });
        expect(await store.loadThread(threadId)).toBeUndefined();
        expect(await listThreads(alice)).toEqual([]);

        alice.send('CPP_SYNC_REQUEST', { threadId }, { id: 'after' });
        await expectError(alice, 'NOT_FOUND', { refId: 'after' });
        remover.send('CPP_THREAD_DELETE', { threadId }, { id: 'delete-2' });
        expect((await remover.next('CPP_THREAD_DELETED')).payload).toEqual({ threadId });
        // The id is retired: an open of it, as a client that was away re-opens its threads, creates nothing.
        remover.send('CPP_THREAD_OPEN', { threadId }, { id: 'reopen' });
        expect((await expectError(remover, 'NOT_FOUND', { refId: 'reopen' })).message).toBe(
          `thread ${threadId} was deleted`,
        );
        expect(await store.loadThread(threadId)).toBeUndefined();
        expect(await listThreads(remover)).toEqual([]);
        await Promise.all([listThreads(tab), listThreads(alice)]);
        expect(tab.all('CPP_SYNC_GRAPH').map((frame) => frame.payload.version)).toEqual([2]);
        expect(alice.all('CPP_GRAPH_PATCH').map((frame) => frame.payload.version)).toEqual([1, 2]);
        expect(alice.all('CPP_THREAD_DELETED')).toHaveLength(1);
      });

      it('is THREAD_BUSY while an answer streams, and CONFLICT on a stale version, deleting nothing', async () => {
        const model = await start();
        const alice = await fixture.connect();
        const { threadId } = await openThread(alice, { patches: true });
        const { assistantNodeId } = await prompt(alice, threadId, 'Stream on');
        const call = await model.call(0);
        call.release(1);
        await chunksReceived(alice, assistantNodeId, 1);

        alice.send('CPP_THREAD_DELETE', { threadId }, { id: 'busy' });
        await expectError(alice, 'THREAD_BUSY', { refId: 'busy', refType: 'CPP_THREAD_DELETE' });
        call.releaseAll();
        await completion(alice, threadId, assistantNodeId);
        alice.send('CPP_THREAD_DELETE', { threadId, expectedVersion: 1 }, { id: 'stale' });
        await expectError(alice, 'CONFLICT', { refId: 'stale' });
        expect((await requestSync(alice, threadId)).nodes[assistantNodeId]?.status).toBe('completed');
      });
    });

    describe('search', () => {
      it("finds the identity's titles and messages, best first, with node ids and snippets", async () => {
        const model = await start();
        const alice = await fixture.connect({ query: 'did=did:example:alice' });
        const bob = await fixture.connect({ query: 'did=did:example:bob' });
        const rivers = await answeredThread(alice, model, 'Tell me about the Danube', 0);
        await answeredThread(bob, model, 'Danube for Bob', 1);

        alice.send('CPP_THREAD_SEARCH', { query: 'danub' });
        const { payload } = await alice.next('CPP_SEARCH_RESULTS');
        expect(payload.query).toBe('danub');
        expect(payload.hits).toEqual([
          {
            threadId: rivers.threadId,
            title: 'Tell me about the Danube',
            nodeId: null,
            snippet: 'Tell me about the Danube',
          },
          {
            threadId: rivers.threadId,
            title: 'Tell me about the Danube',
            nodeId: rivers.userNodeId,
            snippet: expect.stringContaining('Danube'),
          },
        ]);
        alice.send('CPP_THREAD_SEARCH', { query: 'rivers answer', limit: 1 });
        expect((await alice.next('CPP_SEARCH_RESULTS')).payload.hits.map((hit) => hit.nodeId)).toEqual([
          rivers.assistantNodeId,
        ]);
        alice.send('CPP_THREAD_SEARCH', { query: '…' });
        expect((await alice.next('CPP_SEARCH_RESULTS')).payload.hits).toEqual([]);
      });
    });

    describe('import', () => {
      it('creates a thread of every ChatGPT conversation, with its tree and head, owned by the identity', async () => {
        await start();
        const alice = await fixture.connect();
        alice.send('CPP_THREAD_IMPORT', { format: 'chatgpt', document: chatGptExport() }, { id: 'import-1' });
        const { threads } = (await alice.next('CPP_THREADS_IMPORTED')).payload;

        expect(threads.map(({ title, version, nodeCount }) => ({ title, version, nodeCount }))).toEqual([
          { title: 'Rivers of Europe', version: 1, nodeCount: 7 },
          { title: 'Plotting with code', version: 1, nodeCount: 2 },
          { title: 'Edited first prompt', version: 1, nodeCount: 4 },
          { title: '', version: 1, nodeCount: 0 },
        ]);
        const listed = await listThreads(alice);
        expect(listed.map((thread) => thread.threadId).sort()).toEqual(threads.map((thread) => thread.threadId).sort());
        const rivers = await openThread(alice, { threadId: threads[0]!.threadId });
        const branch = pathToRoot({ ...rivers, nodes: rivers.nodes }, rivers.activeHeadMessageId!).map(
          (node) => node.content,
        );
        expect(branch).toEqual([
          'Which is the longest river in Europe?',
          'The Volga, at about 3,530 km.',
          'And in the EU?',
          'Within the EU it is the Danube, about 2,850 km.',
        ]);
      });

      it('imports a CPP JSON export of a thread as a new thread', async () => {
        const model = await start();
        const alice = await fixture.connect();
        const original = await answeredThread(alice, model, 'Export me', 0);
        const sync = await requestSync(alice, original.threadId);
        const exported = { format: 'cpp-thread', formatVersion: 1, exportedAt: Date.now(), thread: sync };

        alice.send('CPP_THREAD_IMPORT', { format: 'cpp-thread', document: exported });
        const [copy] = (await alice.next('CPP_THREADS_IMPORTED')).payload.threads as [ThreadSummary];
        expect(copy).toMatchObject({ title: 'Export me', version: 1, nodeCount: 2 });
        expect(copy.threadId).not.toBe(original.threadId);
        const imported = await openThread(alice, { threadId: copy.threadId });
        expect(
          Object.values(imported.nodes)
            .map((node) => node.content)
            .sort(),
        ).toEqual(
          Object.values(sync.nodes)
            .map((node) => node.content)
            .sort(),
        );
      });

      it('refuses a malformed document with INVALID_FRAME and one past a limit with RATE_LIMITED, importing nothing', async () => {
        await startWith({ limits: { maxNodesPerThread: 6 } });
        const alice = await fixture.connect();
        const broken = chatGptExport() as Array<{ mapping: Record<string, { parent?: string | null }> }>;
        broken[2]!.mapping.u1!.parent = 'missing';

        alice.send('CPP_THREAD_IMPORT', { format: 'chatgpt', document: broken }, { id: 'broken' });
        const error = await expectError(alice, 'INVALID_FRAME', { refId: 'broken', refType: 'CPP_THREAD_IMPORT' });
        expect(error.message).toMatch(/conversation 3 \(Edited first prompt\)/);
        alice.send('CPP_THREAD_IMPORT', { format: 'chatgpt', document: chatGptExport() }, { id: 'too-big' });
        const limited = await expectError(alice, 'RATE_LIMITED', { refId: 'too-big' });
        expect(limited.message).toMatch(/7 messages; the limit is 6/);
        expect(await listThreads(alice)).toEqual([]);
      });

      it('refuses a document larger than a frame with FRAME_TOO_LARGE, naming the command line for it', async () => {
        store = await openStore();
        stores.push(store);
        await fixture.start({ store, maxFrameBytes: 4096 });
        const alice = await fixture.connect();
        alice.send('CPP_THREAD_IMPORT', { format: 'chatgpt', document: chatGptExport() }, { id: 'large' });
        const refused = await expectError(alice, 'FRAME_TOO_LARGE');
        expect(refused.message).toMatch(
          /; the limit is 4096; import a larger file with the server's command line: cpp-server import FILE --did DID$/,
        );
        alice.send('CPP_THREAD_SEARCH', { query: 'x'.repeat(400) }, { padding: 'y'.repeat(4096) });
        expect((await expectError(alice, 'FRAME_TOO_LARGE')).message).toMatch(/the limit is 4096$/);
      });

      it('refuses a document holding a thread past the text limit with RATE_LIMITED, importing nothing', async () => {
        await startWith({ limits: { maxThreadBytes: 64 } });
        const alice = await fixture.connect();
        alice.send('CPP_THREAD_IMPORT', { format: 'chatgpt', document: chatGptExport() }, { id: 'too-long' });
        const limited = await expectError(alice, 'RATE_LIMITED', { refId: 'too-long', refType: 'CPP_THREAD_IMPORT' });
        expect(limited.message).toMatch(/bytes of text; the limit is 64$/);
        expect(await listThreads(alice)).toEqual([]);
      });
    });
  });
}

describeThreadOperations('the memory store', async () => new MemoryStore());

const databases: Array<{ remove(): void }> = [];
// After the stores on them are closed, at the end of their describe block.
afterAll(() => {
  for (const database of databases.splice(0)) database.remove();
});
describeThreadOperations('SQLite', async () => {
  const database = temporaryDatabase();
  databases.push(database);
  return SqliteStore.open(database.path);
});

describeWithPostgres('PostgreSQL', () => {
  const schemas = useTestSchemas();
  describeThreadOperations('PostgreSQL', () =>
    PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema: schemas.create() }),
  );
});
