import {
  applyChange,
  emptyGraph,
  newMessageId,
  newThreadId,
  planFinish,
  planPrompt,
  searchTerms,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import type { ConversationStore, StoredThread } from '../../src/store/conversation-store.js';
import { StoreConflictError } from '../../src/store/store-conflict-error.js';
import { loadSound, type TestClock, type ThreadDriver } from './thread-driver.js';

const ALICE = 'did:example:alice';
const BOB = 'did:example:bob';

export interface ThreadOperationsFixture {
  store(): ConversationStore;
  clock(): TestClock;
  startThread(ownerDid?: string): Promise<ThreadDriver>;
  /** A new store on the same data; undefined for an adapter that does not persist. */
  reopen(): Promise<ConversationStore | undefined>;
}

/** A prompt whose answer completed with `answer`. */
async function exchange(driver: ThreadDriver, prompt: string, answer: string, parentNodeId?: string) {
  const ids = await driver.prompt(prompt, parentNodeId === undefined ? {} : { parentNodeId });
  await driver.finish({ nodeId: ids.assistantNodeId, status: 'completed', content: answer });
  return ids;
}

/** A branching graph built with the protocol's operations: two answers under one first prompt. */
function branchingThread(ownerDid: string, title: string, createdAt: number): StoredThread {
  const graph: ThreadGraph = emptyGraph(newThreadId());
  const apply = (change: ReturnType<typeof planPrompt>) => applyChange(graph, change);
  const first = { userNodeId: newMessageId(), assistantNodeId: newMessageId() };
  apply(planPrompt(graph, { ...first, userPrompt: 'What is a pivot?', createdAt }));
  apply(planFinish(graph, { nodeId: first.assistantNodeId, status: 'completed', content: 'A change of direction.' }));
  const left = { userNodeId: newMessageId(), assistantNodeId: newMessageId() };
  apply(
    planPrompt(graph, {
      ...left,
      userPrompt: 'In basketball?',
      createdAt: createdAt + 1,
      parentNodeId: first.assistantNodeId,
    }),
  );
  apply(planFinish(graph, { nodeId: left.assistantNodeId, status: 'completed', content: 'A foot stays put.' }));
  const right = { userNodeId: newMessageId(), assistantNodeId: newMessageId() };
  apply(
    planPrompt(graph, {
      ...right,
      userPrompt: 'In startups?',
      createdAt: createdAt + 2,
      parentNodeId: first.assistantNodeId,
    }),
  );
  apply(planFinish(graph, { nodeId: right.assistantNodeId, status: 'interrupted', content: 'A new business' }));
  graph.activeHeadMessageId = left.assistantNodeId;
  return {
    threadId: graph.threadId,
    ownerDid,
    title,
    createdAt,
    updatedAt: createdAt + 10,
    graph: { ...graph, version: 1 },
  };
}

/** Thread search, deletion and import: part of the ConversationStore contract every adapter passes. */
export function describeThreadOperationsContract(fixture: ThreadOperationsFixture): void {
  const search = (ownerDid: string, query: string, limit = 20) =>
    fixture.store().searchThreads(ownerDid, searchTerms(query), limit);

  describe('search', () => {
    it("finds the owner's titles and messages holding every term, titles first, with node ids and snippets", async () => {
      const pivots = await fixture.startThread();
      const question = await exchange(pivots, 'Tell me about pivot tables', 'A pivot table summarises rows of data.');
      const other = await fixture.startThread();
      await exchange(other, 'Cooking rice', 'Rinse it, then simmer. Tables are not needed.');
      const bobs = await fixture.startThread(BOB);
      await exchange(bobs, 'Pivot tables for Bob', 'Bob sees pivot tables too.');

      const hits = await search(ALICE, 'Pivot TABLE');

      expect(hits.map(({ threadId, nodeId }) => ({ threadId, nodeId }))).toEqual([
        { threadId: pivots.threadId, nodeId: null },
        expect.objectContaining({ threadId: pivots.threadId }),
        expect.objectContaining({ threadId: pivots.threadId }),
      ]);
      expect(new Set(hits.slice(1).map((hit) => hit.nodeId))).toEqual(
        new Set([question.userNodeId, question.assistantNodeId]),
      );
      expect(hits[0]!.snippet).toBe('Tell me about pivot tables');
      for (const hit of hits) {
        expect(hit.title).toBe('Tell me about pivot tables');
        expect(hit.snippet.toLowerCase()).toContain('pivot');
      }
      expect(await search(BOB, 'rice')).toEqual([]);
    });

    it('matches each term as the start of a word, case-insensitively', async () => {
      const driver = await fixture.startThread();
      const { assistantNodeId } = await exchange(driver, 'Hello', 'Pivoting mid-stream keeps EVERYTHING seen.');

      expect((await search(ALICE, 'piv every')).map((hit) => hit.nodeId)).toEqual([assistantNodeId]);
      expect(await search(ALICE, 'ivot')).toEqual([]);
      expect(await search(ALICE, 'pivoting nowhere')).toEqual([]);
      expect(await search(ALICE, ' !? ')).toEqual([]);
    });

    it('matches a quoted phrase only with its words one after another, in order, each the start of a word', async () => {
      const driver = await fixture.startThread();
      const adjacent = await exchange(driver, 'First', 'Turn 3 is about topic 7 and nothing else.');
      await exchange(driver, 'Second', 'Turn 7 goes over topic 4.');

      expect((await search(ALICE, '"topic 7"')).map((hit) => hit.nodeId)).toEqual([adjacent.assistantNodeId]);
      expect((await search(ALICE, '"top 7" nothing')).map((hit) => hit.nodeId)).toEqual([adjacent.assistantNodeId]);
      expect(await search(ALICE, '"7 topic"')).toEqual([]);
      expect(await search(ALICE, '"topic 7" "turn 7"')).toEqual([]);
      // Unquoted, the same words match both messages.
      expect(await search(ALICE, 'topic 7')).toHaveLength(2);
    });

    it('lists the matching messages after the titles, the message stored last first, whichever thread it is in', async () => {
      const older = await fixture.startThread();
      const first = await exchange(older, 'Anchor questions', 'An anchor holds the boat.');
      const newer = await fixture.startThread();
      const second = await exchange(newer, 'More', 'Anchor, anchor: the anchor moves the head.');
      // The older thread's new answer is stored after every other message; its text is set when it finishes.
      const third = await exchange(older, 'Again', 'A last anchor.');

      expect((await search(ALICE, 'anchor')).map((hit) => hit.nodeId)).toEqual([
        null,
        third.assistantNodeId,
        second.assistantNodeId,
        first.assistantNodeId,
        first.userNodeId,
      ]);
    });

    it('returns at most the limit, and a snippet of a long message rather than all of it', async () => {
      const driver = await fixture.startThread();
      const long = `${'lorem ipsum dolor sit amet '.repeat(200)}needle ${'consectetur adipiscing elit '.repeat(200)}`;
      for (let index = 0; index < 3; index += 1) await exchange(driver, `Question ${index}`, long);

      const hits = await search(ALICE, 'needle', 2);
      expect(hits).toHaveLength(2);
      for (const hit of hits) {
        expect(hit.snippet).toContain('needle');
        expect(hit.snippet.length).toBeLessThan(400);
      }
    });

    it('sees text as last committed, and forgets a deleted thread', async () => {
      const driver = await fixture.startThread();
      const { assistantNodeId } = await driver.prompt('Hello');
      await driver.stream(assistantNodeId, 'Streaming zebra');
      expect(await search(ALICE, 'zebra')).toEqual([]);

      await driver.finish({ nodeId: assistantNodeId, status: 'completed', content: 'Finished zebra' });
      expect((await search(ALICE, 'zebra')).map((hit) => hit.nodeId)).toEqual([assistantNodeId]);

      await fixture.store().deleteThread(driver.threadId);
      expect(await search(ALICE, 'zebra')).toEqual([]);
    });
  });

  describe('delete', () => {
    it('deletes a thread with its nodes and streamed text, and nothing else', async () => {
      const store = fixture.store();
      const doomed = await fixture.startThread();
      const kept = await fixture.startThread();
      await exchange(doomed, 'Doomed', 'Answer');
      const streaming = await doomed.prompt('Still streaming');
      await doomed.stream(streaming.assistantNodeId, 'partial');
      await exchange(kept, 'Kept', 'Answer');

      expect(await store.deleteThread(doomed.threadId)).toBe(true);

      expect(await store.loadThread(doomed.threadId)).toBeUndefined();
      expect(await store.findNodeThread(streaming.assistantNodeId)).toBeUndefined();
      expect((await store.listThreads(ALICE, { limit: 200 })).map((summary) => summary.threadId)).toEqual([
        kept.threadId,
      ]);
      await kept.expectStoreToMatch();
      expect(await store.deleteThread(doomed.threadId)).toBe(false);
      // Its node ids are free again: nothing of it is left behind, but its thread id.
      const reborn = newThreadId();
      const copy = doomed.expected();
      await store.importThreads([
        { ...copy, threadId: reborn, graph: { ...copy.graph, threadId: reborn, version: 1 } },
      ]);
      expect((await loadSound(store, reborn)).graph.nodes[streaming.assistantNodeId]?.content).toBe('partial');
    });

    it("retires a deleted thread's id: neither created nor imported again, also after a reopen", async () => {
      const store = fixture.store();
      const doomed = await fixture.startThread();
      await exchange(doomed, 'Doomed', 'Answer');
      const copy = doomed.expected();
      await store.deleteThread(doomed.threadId);
      const record = { threadId: doomed.threadId, ownerDid: ALICE, title: '', createdAt: 1, updatedAt: 1 };

      await expect(store.createThread(record)).rejects.toSatisfy(StoreConflictError.isInstance);
      const fresh = branchingThread(ALICE, 'Fresh', fixture.clock().now());
      await expect(
        store.importThreads([
          fresh,
          { ...copy, graph: { ...copy.graph, nodes: {}, rootNodeId: null, activeHeadMessageId: null, version: 1 } },
        ]),
      ).rejects.toSatisfy(StoreConflictError.isInstance);
      expect(await store.loadThread(fresh.threadId)).toBeUndefined();
      expect(await store.loadThread(doomed.threadId)).toBeUndefined();
      const reopened = await fixture.reopen();
      if (reopened) await expect(reopened.createThread(record)).rejects.toSatisfy(StoreConflictError.isInstance);
    });
  });

  describe('import', () => {
    it('creates every thread with its whole tree, head and order of siblings, at version 1', async () => {
      const store = fixture.store();
      const now = fixture.clock().now();
      const threads = [branchingThread(ALICE, 'First', now), branchingThread(ALICE, 'Second', now + 100)];

      await store.importThreads(threads);

      for (const thread of threads) expect(await loadSound(store, thread.threadId)).toStrictEqual(thread);
      expect(
        (await store.listThreads(ALICE, { limit: 200 })).map(({ title, version, nodeCount }) => ({
          title,
          version,
          nodeCount,
        })),
      ).toEqual([
        { title: 'Second', version: 1, nodeCount: 6 },
        { title: 'First', version: 1, nodeCount: 6 },
      ]);
      expect((await search(ALICE, 'basketball')).map((hit) => hit.threadId).sort()).toEqual(
        threads.map((thread) => thread.threadId).sort(),
      );
      const reopened = await fixture.reopen();
      if (reopened)
        for (const thread of threads) expect(await loadSound(reopened, thread.threadId)).toStrictEqual(thread);
    });

    it('writes nothing when one thread of the batch cannot be created', async () => {
      const store = fixture.store();
      const existing = await fixture.startThread();
      const taken = await exchange(existing, 'Taken', 'Answer');
      const fresh = branchingThread(ALICE, 'Fresh', fixture.clock().now());
      const clashing = branchingThread(ALICE, 'Clashing', fixture.clock().now());
      const [someId] = Object.keys(clashing.graph.nodes);
      const clashingNode = clashing.graph.nodes[someId!]!;
      delete clashing.graph.nodes[someId!];
      const renamed = { ...clashingNode, id: taken.userNodeId };
      clashing.graph.nodes[taken.userNodeId] = renamed;
      for (const node of Object.values(clashing.graph.nodes)) {
        if (node.parentId === someId) node.parentId = taken.userNodeId;
        node.childrenIds = node.childrenIds.map((id) => (id === someId ? taken.userNodeId : id));
      }
      if (clashing.graph.rootNodeId === someId) clashing.graph.rootNodeId = taken.userNodeId;

      await expect(store.importThreads([fresh, clashing])).rejects.toSatisfy(StoreConflictError.isInstance);
      await expect(
        store.importThreads([fresh, { ...branchingThread(ALICE, 'Same id', 1), threadId: existing.threadId }]),
      ).rejects.toSatisfy(StoreConflictError.isInstance);

      expect(await store.loadThread(fresh.threadId)).toBeUndefined();
      expect((await store.listThreads(ALICE, { limit: 200 })).map((summary) => summary.threadId)).toEqual([
        existing.threadId,
      ]);
      await existing.expectStoreToMatch();
    });

    it('writes batches as they come in one transaction: a refused batch or a failing source leaves none of them', async () => {
      const store = fixture.store();
      const now = fixture.clock().now();
      const first = [branchingThread(ALICE, 'One', now), branchingThread(ALICE, 'Two', now + 1)];
      const second = [branchingThread(ALICE, 'Three', now + 2)];
      async function* batches(...list: StoredThread[][]) {
        yield* list;
      }
      async function* failingAfterOne() {
        yield [branchingThread(ALICE, 'Lost', now)];
        throw new Error('the file ended early');
      }

      await expect(
        store.importThreadBatches(batches(first, [{ ...second[0]!, threadId: first[0]!.threadId }])),
      ).rejects.toSatisfy(StoreConflictError.isInstance);
      await expect(store.importThreadBatches(failingAfterOne())).rejects.toThrow('the file ended early');
      expect(await store.listThreads(ALICE, { limit: 200 })).toEqual([]);

      expect(await store.importThreadBatches(batches(first, second))).toBe(3);
      for (const thread of [...first, ...second]) expect(await loadSound(store, thread.threadId)).toStrictEqual(thread);
      // The store serves again once the import is over.
      expect(await store.countThreads(ALICE, 10)).toBe(3);
    });
  });
}
