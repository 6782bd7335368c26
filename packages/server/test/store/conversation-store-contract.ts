import { applyChange, emptyGraph, newMessageId, newThreadId, planFinish, planPrompt } from '@promethea/cpp-protocol';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, type TestContext } from 'vitest';
import type { ToolCall } from '@promethea/cpp-protocol';
import type { ConversationStore, InviteRecord, ShareLinkRecord } from '../../src/store/conversation-store.js';
import { StoreConflictError } from '../../src/store/store-conflict-error.js';
import { describeAttachmentContract } from './attachment-store-contract.js';
import { applyOperation, operationArbitrary } from './random-operations.js';
import { describeThreadOperationsContract } from './thread-operations-contract.js';
import { loadSound, streamBatch, TestClock, ThreadDriver } from './thread-driver.js';

export interface StoreFixture {
  store: ConversationStore;
  /**
   * For a persistent adapter: opens a new store on the same data. The suite has closed the previous store first.
   * Tests of durability are skipped without it.
   */
  reopen?: () => Promise<ConversationStore>;
}

const ALICE = 'did:example:alice';
const BOB = 'did:example:bob';

/** The behaviour every `ConversationStore` adapter must have; each adapter's test file runs it unchanged. */
export function describeConversationStoreContract(name: string, open: () => Promise<StoreFixture>): void {
  describe(`${name} honours the ConversationStore contract`, () => {
    let fixture: StoreFixture;
    let store: ConversationStore;
    let clock: TestClock;

    beforeEach(async () => {
      fixture = await open();
      store = fixture.store;
      clock = new TestClock();
    });

    afterEach(async () => {
      await store.close();
    });

    async function reopen(context: TestContext): Promise<ConversationStore> {
      if (!fixture.reopen) return context.skip('the adapter does not persist');
      await store.close();
      store = await fixture.reopen();
      return store;
    }

    const startThread = (ownerDid = ALICE) => ThreadDriver.create(store, clock, ownerDid);

    describe('threads', () => {
      it('creates an empty thread at version 0', async () => {
        const record = { threadId: newThreadId(), ownerDid: ALICE, title: '', createdAt: 10, updatedAt: 11 };
        await store.createThread(record);

        expect(await loadSound(store, record.threadId)).toStrictEqual({
          ...record,
          graph: emptyGraph(record.threadId),
        });
        expect(await store.listThreads(ALICE, { limit: 200 })).toStrictEqual([
          { threadId: record.threadId, title: '', createdAt: 10, updatedAt: 11, version: 0, nodeCount: 0 },
        ]);
      });

      it('refuses a second thread with a taken id and keeps the first', async () => {
        const driver = await startThread();
        const taken = { ...driver.record, ownerDid: BOB, title: 'impostor' };

        await expect(store.createThread(taken)).rejects.toSatisfy(StoreConflictError.isInstance);
        await driver.expectStoreToMatch();
        expect(await store.listThreads(BOB, { limit: 200 })).toEqual([]);
      });

      it('loads nothing for an unknown thread', async () => {
        expect(await store.loadThread(newThreadId())).toBeUndefined();
      });
    });

    describe('commit', () => {
      it('commits a first prompt as the root, with a streaming assistant node as the head', async () => {
        const driver = await startThread();
        const { userNodeId, assistantNodeId } = await driver.prompt('Hello', { model: 'demo-echo' });

        const { graph, title } = await loadSound(store, driver.threadId);
        expect(graph.rootNodeId).toBe(userNodeId);
        expect(graph.activeHeadMessageId).toBe(assistantNodeId);
        expect(graph.version).toBe(1);
        expect(graph.nodes[assistantNodeId]).toMatchObject({
          parentId: userNodeId,
          status: 'streaming',
          model: 'demo-echo',
        });
        expect(title).toBe('Hello');
        await driver.expectStoreToMatch();
      });

      it('commits a finish with its final text and usage', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.finish({
          nodeId: assistantNodeId,
          status: 'completed',
          content: 'Hi there',
          usage: { inputTokens: 3, outputTokens: 2 },
        });

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[assistantNodeId]).toMatchObject({
          status: 'completed',
          content: 'Hi there',
          usage: { inputTokens: 3, outputTokens: 2 },
        });
        await driver.expectStoreToMatch();
      });

      it("keeps what an answer's model read of its branch, through its finish", async () => {
        const driver = await startThread();
        const first = await driver.prompt('Hello');
        await driver.finish({ nodeId: first.assistantNodeId, status: 'completed', content: 'Hi' });
        const context = { fromNodeId: first.assistantNodeId, omittedNodes: 1 };
        const { assistantNodeId } = await driver.prompt('Again', { context });
        await driver.finish({ nodeId: assistantNodeId, status: 'completed', content: 'Hi again' });

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[assistantNodeId]?.context).toStrictEqual(context);
        expect(graph.nodes[first.assistantNodeId]).not.toHaveProperty('context');
        await driver.expectStoreToMatch();
      });

      it('commits a pivot splice: the interrupted node cut, the new exchange under it', async () => {
        const driver = await startThread();
        const first = await driver.prompt('Tell me about Rome');
        await driver.stream(first.assistantNodeId, 'Rome was founded');
        const pivot = await driver.pivot(first.assistantNodeId, 'Rome was', 'Only the empire, please');

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[first.assistantNodeId]).toMatchObject({
          status: 'interrupted',
          content: 'Rome was',
          childrenIds: [pivot.userNodeId],
        });
        expect(graph.nodes[pivot.userNodeId]).toMatchObject({
          parentId: first.assistantNodeId,
          childrenIds: [pivot.assistantNodeId],
        });
        expect(graph.activeHeadMessageId).toBe(pivot.assistantNodeId);
        await driver.expectStoreToMatch();
      });

      it('commits a pivot on a finished node as a plain branch under it', async () => {
        const driver = await startThread();
        const first = await driver.prompt('Hello');
        await driver.finish({ nodeId: first.assistantNodeId, status: 'completed', content: 'Hi' });
        await driver.pivot(first.assistantNodeId, undefined, 'And then?');

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[first.assistantNodeId]).toMatchObject({ status: 'completed', content: 'Hi' });
        await driver.expectStoreToMatch();
      });

      it('commits an anchor as a move of the head alone', async () => {
        const driver = await startThread();
        const first = await driver.prompt('Hello');
        await driver.prompt('More');
        await driver.anchor(first.userNodeId);

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.activeHeadMessageId).toBe(first.userNodeId);
        expect(graph.version).toBe(3);
        await driver.expectStoreToMatch();
      });

      it('commits a regenerate: a new answer beside the earlier one, the streaming one kept at its cut', async () => {
        const driver = await startThread();
        const first = await driver.prompt('Tell me about Rome');
        await driver.stream(first.assistantNodeId, 'Rome was founded');
        const second = await driver.regenerate(first.userNodeId, { nodeId: first.assistantNodeId, content: 'Rome' });

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[first.userNodeId]?.childrenIds).toEqual([first.assistantNodeId, second]);
        expect(graph.nodes[first.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Rome' });
        expect(graph.nodes[second]).toMatchObject({ status: 'streaming', content: '' });
        expect(graph.activeHeadMessageId).toBe(second);
        await driver.expectStoreToMatch();
      });

      it('commits a branch delete: the subtree gone, its parent without it, the head moved up', async () => {
        const driver = await startThread();
        const first = await driver.prompt('Hello');
        await driver.finish({ nodeId: first.assistantNodeId, status: 'completed', content: 'Hi' });
        const kept = await driver.prompt('Stay', { parentNodeId: first.assistantNodeId });
        await driver.finish({ nodeId: kept.assistantNodeId, status: 'completed', content: 'Staying' });
        const doomed = await driver.prompt('Go', { parentNodeId: first.assistantNodeId });
        await driver.stream(doomed.assistantNodeId, 'Going');
        await driver.finish({ nodeId: doomed.assistantNodeId, status: 'failed', content: 'Going' });
        await driver.deleteBranch(doomed.userNodeId);

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[doomed.userNodeId]).toBeUndefined();
        expect(graph.nodes[doomed.assistantNodeId]).toBeUndefined();
        expect(graph.nodes[first.assistantNodeId]?.childrenIds).toEqual([kept.userNodeId]);
        expect(graph.activeHeadMessageId).toBe(first.assistantNodeId);
        expect(await store.findNodeThread(doomed.assistantNodeId)).toBeUndefined();
        expect((await store.listThreads(ALICE, { limit: 200 }))[0]?.nodeCount).toBe(4);
        await driver.expectStoreToMatch();
      });

      it('refuses a change planned against a stale version and writes nothing of it', async () => {
        const driver = await startThread();
        const { userNodeId } = await driver.prompt('Hello');
        const planned = structuredClone(driver.graph);
        const stale = planPrompt(planned, {
          userNodeId: newMessageId(),
          userPrompt: 'Late',
          assistantNodeId: newMessageId(),
          createdAt: clock.now(),
        });
        await driver.anchor(userNodeId);
        const before = await store.listThreads(ALICE, { limit: 200 });

        await expect(store.commit(stale, { updatedAt: clock.now(), title: 'Late' })).rejects.toSatisfy(
          StoreConflictError.isInstance,
        );
        await driver.expectStoreToMatch();
        expect(await store.listThreads(ALICE, { limit: 200 })).toStrictEqual(before);
        for (const node of stale.nodes)
          if (!planned.nodes[node.id]) expect(await store.findNodeThread(node.id)).toBeUndefined();
      });

      it('refuses a change to a thread that does not exist', async () => {
        const threadId = newThreadId();
        const change = planPrompt(emptyGraph(threadId), {
          userNodeId: newMessageId(),
          userPrompt: 'Hi',
          assistantNodeId: newMessageId(),
          createdAt: 1,
        });

        await expect(store.commit(change, { updatedAt: 2 })).rejects.toSatisfy(StoreConflictError.isInstance);
        expect(await store.loadThread(threadId)).toBeUndefined();
      });

      it('refuses a node id that another thread holds, writing none of the change', async () => {
        const other = await startThread(BOB);
        const taken = await other.prompt('Mine');
        const driver = await startThread();
        const userNodeId = newMessageId();

        // The clash is on the change's last node, so a store that wrote node by node would have written the first.
        await expect(driver.prompt('Yours?', { userNodeId, assistantNodeId: taken.assistantNodeId })).rejects.toSatisfy(
          StoreConflictError.isInstance,
        );
        expect(await store.findNodeThread(userNodeId)).toBeUndefined();
        await driver.expectStoreToMatch();
        await other.expectStoreToMatch();
      });

      it('keeps children in the order they were committed, whatever their ids', async () => {
        const driver = await startThread();
        const root = await driver.prompt('Root', { userNodeId: 'msg_root', assistantNodeId: 'msg_root_answer' });
        const parents = [root.userNodeId, root.assistantNodeId];
        // Ids that sort backwards, and branches interleaved between two parents.
        for (let index = 20; index > 0; index -= 1) {
          const id = String(index).padStart(2, '0');
          await driver.prompt(`Branch ${id}`, {
            parentNodeId: parents[index % 2],
            userNodeId: `msg_${id}_user`,
            assistantNodeId: `msg_${id}_answer`,
          });
        }

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes['msg_root']?.childrenIds).toEqual([
          'msg_root_answer',
          ...['20', '18', '16', '14', '12', '10', '08', '06', '04', '02'].map((id) => `msg_${id}_user`),
        ]);
        await driver.expectStoreToMatch();
      });

      it('sets the title only when a commit gives one, and updatedAt on every commit', async () => {
        const driver = await startThread();
        const first = await driver.prompt('The first prompt');
        await driver.finish({ nodeId: first.assistantNodeId, status: 'completed', content: 'Answer' });
        await driver.prompt('A second prompt');

        const stored = await loadSound(store, driver.threadId);
        expect(stored.title).toBe('The first prompt');
        expect(stored.updatedAt).toBe(driver.record.updatedAt);
        expect(stored.updatedAt).toBeGreaterThan(stored.createdAt);
      });

      it("keeps its state out of the callers' reach", async () => {
        const record = { threadId: newThreadId(), ownerDid: ALICE, title: '', createdAt: 1, updatedAt: 1 };
        await store.createThread(record);
        record.title = 'changed';
        const graph = emptyGraph(record.threadId);
        const ids = { userNodeId: newMessageId(), assistantNodeId: newMessageId() };
        const prompt = planPrompt(graph, { ...ids, userPrompt: 'Hello', createdAt: 2 });
        await store.commit(prompt, { updatedAt: 2 });
        applyChange(graph, structuredClone(prompt));
        const finish = planFinish(graph, {
          nodeId: ids.assistantNodeId,
          status: 'completed',
          content: 'Hi',
          usage: { outputTokens: 1 },
        });
        await store.commit(finish, { updatedAt: 3 });
        const expected = structuredClone(await loadSound(store, record.threadId));

        const committedNode = finish.nodes[0]!;
        committedNode.content = 'changed';
        committedNode.usage!.outputTokens = 99;
        const loaded = await loadSound(store, record.threadId);
        const loadedNode = loaded.graph.nodes[ids.assistantNodeId]!;
        loadedNode.usage!.outputTokens = 99;
        loadedNode.childrenIds.push('msg_smuggled');
        loaded.title = 'changed';

        expect(expected.title).toBe('');
        expect(await loadSound(store, record.threadId)).toStrictEqual(expected);
      });
    });

    describe('queries', () => {
      it("lists an owner's threads, most recently updated first, with their node counts", async () => {
        const older = await startThread();
        const newer = await startThread();
        const bobs = await startThread(BOB);
        await newer.prompt('New');
        await older.prompt('Old');
        await older.prompt('Older, but updated last');
        await bobs.prompt('Not yours');

        const summaries = await store.listThreads(ALICE, { limit: 200 });
        expect(summaries).toStrictEqual([
          {
            threadId: older.threadId,
            title: 'Old',
            createdAt: older.record.createdAt,
            updatedAt: older.record.updatedAt,
            version: 2,
            nodeCount: 4,
          },
          {
            threadId: newer.threadId,
            title: 'New',
            createdAt: newer.record.createdAt,
            updatedAt: newer.record.updatedAt,
            version: 1,
            nodeCount: 2,
          },
        ]);
        expect(await store.listThreads('did:example:nobody', { limit: 200 })).toEqual([]);
      });

      it('lists in pages: each page after the position of the last one, ties by thread id, none twice', async () => {
        // Seven threads, the first four updated in the same millisecond: the order breaks ties by id.
        const records = Array.from({ length: 7 }, (_, index) => ({
          threadId: newThreadId(),
          ownerDid: ALICE,
          title: `thread ${index}`,
          createdAt: 100,
          updatedAt: index < 4 ? 500 : 500 + index,
        }));
        for (const record of records) await store.createThread(record);
        await store.createThread({ ...records[0]!, threadId: newThreadId(), ownerDid: BOB });
        const whole = await store.listThreads(ALICE, { limit: 200 });
        expect(whole.map((summary) => summary.threadId)).toEqual(
          [...records]
            .sort((a, b) => b.updatedAt - a.updatedAt || (a.threadId < b.threadId ? 1 : -1))
            .map((record) => record.threadId),
        );

        const paged = [];
        let page = await store.listThreads(ALICE, { limit: 3 });
        while (page.length > 0) {
          paged.push(...page);
          const last = page.at(-1)!;
          page = await store.listThreads(ALICE, { limit: 3, after: last });
        }
        expect(paged).toStrictEqual(whole);

        // A position names a place in the order, not a thread: it still works once its thread is gone.
        await store.deleteThread(whole[2]!.threadId);
        expect(await store.listThreads(ALICE, { limit: 2, after: whole[2] })).toStrictEqual(whole.slice(3, 5));
      });

      it("counts an owner's threads up to a bound, and gives one thread's summary with its owner", async () => {
        const threads = [await startThread(), await startThread(), await startThread()];
        await startThread(BOB);
        await threads[1]!.prompt('Counted');

        expect(await store.countThreads(ALICE, 10)).toBe(3);
        expect(await store.countThreads(ALICE, 2)).toBe(2);
        expect(await store.countThreads('did:example:nobody', 10)).toBe(0);
        const [listed] = await store.listThreads(ALICE, { limit: 1 });
        expect(await store.threadSummary(threads[1]!.threadId)).toStrictEqual({ ownerDid: ALICE, summary: listed });
        expect(await store.threadSummary(newThreadId())).toBeUndefined();
      });

      it('finds the thread that holds a node', async () => {
        const alices = await startThread();
        const bobs = await startThread(BOB);
        const alicesNodes = await alices.prompt('Hello');
        const bobsNodes = await bobs.prompt('Hello');

        expect(await store.findNodeThread(alicesNodes.assistantNodeId)).toBe(alices.threadId);
        expect(await store.findNodeThread(bobsNodes.userNodeId)).toBe(bobs.threadId);
        expect(await store.findNodeThread(newMessageId())).toBeUndefined();
      });
    });

    describe('streamed text', () => {
      it('saves the text streamed so far, piece by piece, without a new version', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'Hi');
        await driver.stream(assistantNodeId, 'Hi there');

        const stored = await loadSound(store, driver.threadId);
        expect(stored.graph.nodes[assistantNodeId]?.content).toBe('Hi there');
        expect(stored.graph.version).toBe(1);
        await driver.expectStoreToMatch();
      });

      it('saves in one batch the text of several nodes across several threads', async () => {
        const twoStreams = await startThread();
        const oneStream = await startThread(BOB);
        const a = await twoStreams.prompt('First');
        const b = await twoStreams.prompt('Second, on the side', { parentNodeId: a.userNodeId });
        const c = await oneStream.prompt('Third');
        const listed = [await store.listThreads(ALICE, { limit: 200 }), await store.listThreads(BOB, { limit: 200 })];

        await streamBatch(store, [
          { driver: twoStreams, nodeId: a.assistantNodeId, offset: 0, text: 'Partial A' },
          { driver: oneStream, nodeId: c.assistantNodeId, offset: 0, text: 'Partial C' },
          { driver: twoStreams, nodeId: b.assistantNodeId, offset: 0, text: 'Partial B' },
        ]);

        expect((await loadSound(store, twoStreams.threadId)).graph.nodes[b.assistantNodeId]?.content).toBe('Partial B');
        await twoStreams.expectStoreToMatch();
        await oneStream.expectStoreToMatch();
        expect([
          await store.listThreads(ALICE, { limit: 200 }),
          await store.listThreads(BOB, { limit: 200 }),
        ]).toStrictEqual(listed);
      });

      it('skips the entries for a node no longer streaming, not in the thread named, or unknown, and applies the others', async () => {
        const driver = await startThread();
        const other = await startThread();
        const { userNodeId, assistantNodeId } = await driver.prompt('Hello');
        const streaming = await other.prompt('Still going');
        await driver.finish({ nodeId: assistantNodeId, status: 'completed', content: 'Final' });

        await streamBatch(store, [
          { driver, nodeId: assistantNodeId, offset: 0, text: 'Late batch' },
          { driver, nodeId: userNodeId, offset: 0, text: 'Not a stream' },
          { driver, nodeId: streaming.assistantNodeId, offset: 0, text: 'Wrong thread' },
          { driver, nodeId: newMessageId(), offset: 0, text: 'Unknown node' },
          { driver: other, nodeId: streaming.assistantNodeId, offset: 0, text: 'Applied' },
        ]);
        await store.saveStreamedText([{ threadId: newThreadId(), nodeId: newMessageId(), offset: 0, text: 'Nowhere' }]);

        expect((await loadSound(store, other.threadId)).graph.nodes[streaming.assistantNodeId]?.content).toBe(
          'Applied',
        );
        expect((await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]?.content).toBe('Final');
        await driver.expectStoreToMatch();
        await other.expectStoreToMatch();
      });

      it('keeps the last entry for a node and offset that a batch names more than once', async () => {
        const driver = await startThread();
        const other = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');

        await streamBatch(store, [
          { driver, nodeId: assistantNodeId, offset: 0, text: 'Hi' },
          { driver, nodeId: assistantNodeId, offset: 0, text: 'Hi there' },
          // Named with the wrong thread last: skipped, so the right thread's last entry stands.
          { driver: other, nodeId: assistantNodeId, offset: 0, text: 'Wrong thread' },
        ]);

        expect((await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]?.content).toBe('Hi there');
        await driver.expectStoreToMatch();
      });

      it("spells a node's text from its pieces in order of offset: a piece saved again replaces it, one beyond a gap is left out", async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        const textOf = async () => (await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]?.content;
        const piece = (offset: number, text: string) => ({ driver, nodeId: assistantNodeId, offset, text });

        await streamBatch(store, [piece(3, 'lo'), piece(0, 'Hel'), piece(9, 'after a gap')]);
        expect(await textOf()).toBe('Hello');
        // A batch written again after a failure, with what streamed since: it closes the gap.
        await streamBatch(store, [piece(3, 'lo wor')]);
        expect(await textOf()).toBe('Hello worafter a gap');
        await streamBatch(store, [piece(9, 'ld')]);
        expect(await textOf()).toBe('Hello world');
        await driver.expectStoreToMatch();

        await driver.finish({ nodeId: assistantNodeId, status: 'completed', content: 'Hello world!' });
        expect(await textOf()).toBe('Hello world!');
        await driver.expectStoreToMatch();
      });

      it('counts offsets in UTF-16 code units, as CPP_STREAM_CHUNK does', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'wörld 🚀');
        await driver.stream(assistantNodeId, 'wörld 🚀 and 🌍');

        expect((await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]?.content).toBe('wörld 🚀 and 🌍');
        await driver.expectStoreToMatch();
      });

      it('does nothing for an empty batch', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'Hi');
        const listed = await store.listThreads(ALICE, { limit: 200 });

        await store.saveStreamedText([]);

        await driver.expectStoreToMatch();
        expect(await store.listThreads(ALICE, { limit: 200 })).toStrictEqual(listed);
      });

      it('lists the threads with a node still streaming, each once, sorted', async () => {
        const twoStreams = await startThread();
        const oneStream = await startThread(BOB);
        const finished = await startThread();
        const a = await twoStreams.prompt('First');
        await twoStreams.prompt('Second, on the side', { parentNodeId: a.userNodeId });
        await oneStream.prompt('Third');
        const d = await finished.prompt('Fourth');
        await finished.finish({ nodeId: d.assistantNodeId, status: 'completed', content: 'Done' });

        expect(await store.streamingThreads()).toStrictEqual([twoStreams.threadId, oneStream.threadId].sort());
        await store.interruptStreamingNodes(clock.now());
        expect(await store.streamingThreads()).toStrictEqual([]);
      });

      it('recovers streaming nodes as interrupted with their persisted text, one new version per thread', async () => {
        const twoStreams = await startThread();
        const oneStream = await startThread(BOB);
        const finished = await startThread();
        const a = await twoStreams.prompt('First');
        const b = await twoStreams.prompt('Second, on the side', { parentNodeId: a.userNodeId });
        const c = await oneStream.prompt('Third');
        const d = await finished.prompt('Fourth');
        await twoStreams.stream(a.assistantNodeId, 'Part');
        await twoStreams.stream(a.assistantNodeId, 'Partial A');
        await oneStream.stream(c.assistantNodeId, 'Partial C');
        await finished.finish({ nodeId: d.assistantNodeId, status: 'completed', content: 'Done' });
        const now = clock.now();

        const recovered = await store.interruptStreamingNodes(now);

        expect(recovered).toStrictEqual([twoStreams.threadId, oneStream.threadId].sort());
        const expectRecovered = async (driver: ThreadDriver, nodeIds: string[]) => {
          const expected = driver.expected();
          for (const nodeId of nodeIds) expected.graph.nodes[nodeId]!.status = 'interrupted';
          expected.graph.version += 1;
          expected.updatedAt = now;
          expect(await loadSound(store, driver.threadId)).toStrictEqual(expected);
        };
        await expectRecovered(twoStreams, [a.assistantNodeId, b.assistantNodeId]);
        await expectRecovered(oneStream, [c.assistantNodeId]);
        await finished.expectStoreToMatch();
        expect(await store.interruptStreamingNodes(clock.now())).toEqual([]);
      });
    });

    describe('tool calls', () => {
      const call = (id: string, offset: number, state: ToolCall['state'], extra: Partial<ToolCall> = {}): ToolCall => ({
        toolCallId: `call_${id}`,
        toolName: 'count_to',
        step: 0,
        offset,
        state,
        input: '{"to":3}',
        ...extra,
      });

      it("saves a streaming answer's tool calls as they change, without a new version, and commits them with its end", async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Count');
        await driver.stream(assistantNodeId, 'Counting.');
        await store.saveToolCalls(driver.threadId, assistantNodeId, [
          call('a', 9, 'input-streaming', { input: '{"to"' }),
        ]);
        const running = [call('a', 9, 'input-available', { progress: { progress: 1, total: 3 } })];
        await store.saveToolCalls(driver.threadId, assistantNodeId, running);
        const stored = await loadSound(store, driver.threadId);
        expect(stored.graph.version).toBe(1);
        expect(stored.graph.nodes[assistantNodeId]?.toolCalls).toStrictEqual(running);

        const done = [call('a', 9, 'output-available', { output: '1 2 3' })];
        await driver.finish({
          nodeId: assistantNodeId,
          status: 'completed',
          content: 'Counting. Done.',
          toolCalls: done,
        });
        await driver.expectStoreToMatch();
        // A late save, after the commit, changes nothing; nor does a save naming another thread.
        await store.saveToolCalls(driver.threadId, assistantNodeId, running);
        const other = await startThread();
        await store.saveToolCalls(other.threadId, assistantNodeId, running);
        await driver.expectStoreToMatch();
      });

      it('recovers an answer a crash left running a tool: the running call interrupted, one after the saved text dropped', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Count');
        await driver.stream(assistantNodeId, 'Counting.');
        const calls = [
          call('done', 0, 'output-available', { output: 'ok' }),
          call('running', 9, 'input-available', { progress: { progress: 2 } }),
          call('after', 20, 'input-available'),
        ];
        await store.saveToolCalls(driver.threadId, assistantNodeId, calls);

        expect(await store.interruptStreamingNodes(clock.now())).toEqual([driver.threadId]);

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Counting.' });
        expect(graph.nodes[assistantNodeId]?.toolCalls).toStrictEqual([calls[0], call('running', 9, 'interrupted')]);
      });

      it('gives back tool calls identically after a reopen', async (context) => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Count');
        const toolCalls = [
          call('a', 0, 'output-error', { errorText: 'no' }),
          call('b', 0, 'output-available', { output: '' }),
        ];
        await driver.finish({ nodeId: assistantNodeId, status: 'completed', content: 'Done', toolCalls });
        await driver.expectStoreToMatch(await reopen(context));
      });
    });

    describe('reasoning and continued answers', () => {
      it("saves streamed reasoning apart from the answer's text, each part spelled from its own pieces", async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'Let me', 'reasoning');
        await driver.stream(assistantNodeId, 'Let me think', 'reasoning');
        await driver.stream(assistantNodeId, 'Hi');

        expect((await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]).toMatchObject({
          reasoning: 'Let me think',
          content: 'Hi',
        });
        await driver.expectStoreToMatch();
      });

      it('commits reasoning with the finish, and a node without reasoning has none', async () => {
        const driver = await startThread();
        const first = await driver.prompt('Hello');
        await driver.stream(first.assistantNodeId, 'Hmm', 'reasoning');
        await driver.finish({
          nodeId: first.assistantNodeId,
          status: 'completed',
          content: 'Hi',
          reasoning: 'Hmm, a greeting',
        });
        const second = await driver.prompt('Again');
        await driver.finish({ nodeId: second.assistantNodeId, status: 'completed', content: 'Hi again' });

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[first.assistantNodeId]).toMatchObject({ content: 'Hi', reasoning: 'Hmm, a greeting' });
        expect(graph.nodes[second.assistantNodeId]).not.toHaveProperty('reasoning');
        await driver.expectStoreToMatch();
      });

      it('recovers a node halted by a crash while it reasoned with its reasoning and an empty answer', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'Let me think', 'reasoning');

        expect(await store.interruptStreamingNodes(clock.now())).toEqual([driver.threadId]);

        const { graph } = await loadSound(store, driver.threadId);
        expect(graph.nodes[assistantNodeId]).toMatchObject({
          status: 'interrupted',
          content: '',
          reasoning: 'Let me think',
        });
      });

      it('continues an interrupted answer: the same node streams again, its text saved on from where it ended', async () => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.finish({ nodeId: assistantNodeId, status: 'interrupted', content: 'Part', reasoning: 'Hm' });
        await driver.continue(assistantNodeId, 'strong');
        await driver.stream(assistantNodeId, 'Partial', 'content');
        await driver.stream(assistantNodeId, 'Hmm', 'reasoning');

        await driver.expectStoreToMatch();
        expect((await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]).toMatchObject({
          status: 'streaming',
          content: 'Partial',
          reasoning: 'Hmm',
          model: 'strong',
        });
        await store.interruptStreamingNodes(clock.now());
        expect((await loadSound(store, driver.threadId)).graph.nodes[assistantNodeId]).toMatchObject({
          status: 'interrupted',
          content: 'Partial',
          reasoning: 'Hmm',
        });
      });
    });

    describe('members', () => {
      const CAROL = 'did:example:carol';

      it('keeps members in the order they were first added, a changed role in its place', async () => {
        const driver = await startThread();
        expect(await store.setMember(driver.threadId, BOB, 'reader')).toBe(true);
        expect(await store.setMember(driver.threadId, CAROL, 'writer')).toBe(true);
        expect(await store.setMember(driver.threadId, BOB, 'writer')).toBe(true);

        expect(await store.members(driver.threadId)).toStrictEqual([
          { did: BOB, role: 'writer' },
          { did: CAROL, role: 'writer' },
        ]);
        expect(await store.memberRole(driver.threadId, CAROL)).toBe('writer');
        expect(await store.memberRole(driver.threadId, ALICE)).toBeUndefined();
      });

      it('removes a member once, and adds none to a thread that does not exist', async () => {
        const driver = await startThread();
        await store.setMember(driver.threadId, BOB, 'reader');

        expect(await store.removeMember(driver.threadId, BOB)).toBe(true);
        expect(await store.removeMember(driver.threadId, BOB)).toBe(false);
        expect(await store.memberRole(driver.threadId, BOB)).toBeUndefined();
        const unknown = newThreadId();
        expect(await store.setMember(unknown, BOB, 'reader')).toBe(false);
        expect(await store.members(unknown)).toStrictEqual([]);
      });

      it("lists a member's shared threads among its own, in the list's order, with its role, across pages", async () => {
        const bobs = await startThread(BOB);
        const shared = await startThread();
        const alone = await startThread();
        const another = await startThread();
        await store.setMember(shared.threadId, BOB, 'reader');
        await store.setMember(another.threadId, BOB, 'writer');
        await another.prompt('Shared, updated last');
        const { record } = alone;
        const summaryOf = async (driver: ThreadDriver) =>
          (await store.listThreads(driver.record.ownerDid, { limit: 200 })).find(
            (summary) => summary.threadId === driver.threadId,
          );

        const all = await store.listThreads(BOB, { limit: 200 });
        expect(all.map((summary) => [summary.threadId, summary.role])).toStrictEqual([
          [another.threadId, 'writer'],
          [shared.threadId, 'reader'],
          [bobs.threadId, undefined],
        ]);
        expect(all[0]).toStrictEqual({ ...(await summaryOf(another)), role: 'writer' });
        expect(await summaryOf(shared)).not.toHaveProperty('role');
        expect(all.map((summary) => summary.threadId)).not.toContain(record.threadId);

        const first = await store.listThreads(BOB, { limit: 1 });
        const second = await store.listThreads(BOB, { limit: 2, after: first[0] });
        expect([...first, ...second]).toStrictEqual(all);
      });

      it('go with their thread', async () => {
        const driver = await startThread();
        await store.setMember(driver.threadId, BOB, 'writer');
        await store.deleteThread(driver.threadId);

        expect(await store.members(driver.threadId)).toStrictEqual([]);
        expect(await store.listThreads(BOB, { limit: 200 })).toStrictEqual([]);
      });

      it("keeps a user node's author, and the members, when reopened", async (context) => {
        const driver = await startThread();
        await driver.prompt('Mine', { authorDid: BOB });
        await store.setMember(driver.threadId, BOB, 'writer');
        await driver.expectStoreToMatch();
        const reopened = await reopen(context);

        await driver.expectStoreToMatch(reopened);
        expect(await reopened.members(driver.threadId)).toStrictEqual([{ did: BOB, role: 'writer' }]);
      });
    });

    describe('share links', () => {
      const linkOf = (threadId: string, fields: Partial<ShareLinkRecord> = {}): ShareLinkRecord => ({
        linkId: `shr_${newThreadId().slice(-22)}`,
        threadId,
        ownerDid: ALICE,
        tokenHash: newThreadId().padEnd(64, '0').slice(0, 64),
        scope: 'branch',
        createdAt: 100,
        snapshot: '{"title":"t","scope":"branch","nodes":[]}',
        ...fields,
      });

      it('keeps links with their snapshot, lists them oldest first, counts them per owner, revokes them', async () => {
        const driver = await startThread();
        const later = linkOf(driver.threadId, { createdAt: 200, scope: 'tree' });
        const earlier = linkOf(driver.threadId);
        expect(await store.createShareLink(later)).toBe(true);
        expect(await store.createShareLink(earlier)).toBe(true);
        expect(await store.createShareLink(linkOf(newThreadId()))).toBe(false);
        const summary = ({ linkId, scope, createdAt }: ShareLinkRecord) => ({ linkId, scope, createdAt });
        expect(await store.shareLinks(driver.threadId)).toStrictEqual([summary(earlier), summary(later)]);
        expect(await store.countShareLinks(ALICE)).toBe(2);
        expect(await store.countShareLinks(BOB)).toBe(0);
        expect(await store.findShareLink(later.tokenHash)).toStrictEqual(later);

        expect(await store.revokeShareLink(driver.threadId, later.linkId)).toBe(true);
        expect(await store.revokeShareLink(driver.threadId, later.linkId)).toBe(false);
        expect(await store.findShareLink(later.tokenHash)).toBeUndefined();
        await store.deleteThread(driver.threadId);
        expect(await store.findShareLink(earlier.tokenHash)).toBeUndefined();
        expect(await store.countShareLinks(ALICE)).toBe(0);
      });
    });

    describe('invites', () => {
      const inviteOf = (threadId: string, fields: Partial<InviteRecord> = {}): InviteRecord => ({
        inviteId: `inv_${newThreadId().slice(-22)}`,
        threadId,
        tokenHash: newThreadId(),
        role: 'reader',
        createdAt: 100,
        expiresAt: 1_000,
        maxUses: 2,
        uses: 0,
        ...fields,
      });

      it('lists the usable invites oldest first, takes each use once, and never one past the last', async () => {
        const driver = await startThread();
        const twice = inviteOf(driver.threadId);
        const later = inviteOf(driver.threadId, { createdAt: 200, role: 'writer', maxUses: 1 });
        expect(await store.createInvite(later)).toBe(true);
        expect(await store.createInvite(twice)).toBe(true);
        expect(await store.invites(driver.threadId, 500)).toStrictEqual([twice, later]);

        expect(await store.findInvite(twice.tokenHash, 500)).toStrictEqual(twice);
        expect(await store.useInvite(twice.tokenHash, 500)).toStrictEqual({ ...twice, uses: 1 });
        const last = await Promise.all([store.useInvite(twice.tokenHash, 500), store.useInvite(twice.tokenHash, 500)]);
        expect(last.filter((invite) => invite !== undefined)).toStrictEqual([{ ...twice, uses: 2 }]);
        expect(await store.invites(driver.threadId, 500)).toStrictEqual([later]);
        expect(await store.findInvite(twice.tokenHash, 500)).toBeUndefined();
        expect(await store.useInvite(later.tokenHash, 1_000)).toBeUndefined();
        expect(await store.findInvite(later.tokenHash, 1_000)).toBeUndefined();
        expect(await store.invites(driver.threadId, 1_000)).toStrictEqual([]);
      });

      it('revokes an invite, adds none to a thread that does not exist, and deletes them with their thread', async () => {
        const driver = await startThread();
        const invite = inviteOf(driver.threadId);
        await store.createInvite(invite);
        expect(await store.revokeInvite(driver.threadId, invite.inviteId)).toBe(true);
        expect(await store.revokeInvite(driver.threadId, invite.inviteId)).toBe(false);
        expect(await store.useInvite(invite.tokenHash, 500)).toBeUndefined();
        expect(await store.createInvite(inviteOf(newThreadId()))).toBe(false);

        const kept = inviteOf(driver.threadId);
        await store.createInvite(kept);
        await store.deleteThread(driver.threadId);
        expect(await store.useInvite(kept.tokenHash, 500)).toBeUndefined();
      });
    });

    describe('lifecycle', () => {
      it('refuses work once closed', async () => {
        const driver = await startThread();
        await store.close();

        await expect(store.loadThread(driver.threadId)).rejects.toThrow();
        await expect(store.listThreads(ALICE, { limit: 200 })).rejects.toThrow();
        await expect(store.saveStreamedText([])).rejects.toThrow();
      });

      it('gives back every thread identically after a reopen', async (context) => {
        const drivers = [await startThread(), await startThread(BOB)];
        for (const driver of drivers) {
          const first = await driver.prompt('Hello', { model: 'demo-echo' });
          await driver.stream(first.assistantNodeId, 'Hi, th');
          const pivot = await driver.pivot(first.assistantNodeId, 'Hi', 'Shorter');
          await driver.finish({
            nodeId: pivot.assistantNodeId,
            status: 'completed',
            content: 'Ok',
            usage: { outputTokens: 1 },
          });
          await driver.prompt('Side branch', { parentNodeId: first.userNodeId });
          await driver.anchor(pivot.userNodeId);
        }
        const listed = [await store.listThreads(ALICE, { limit: 200 }), await store.listThreads(BOB, { limit: 200 })];

        const reopened = await reopen(context);

        for (const driver of drivers) await driver.expectStoreToMatch(reopened);
        expect([
          await reopened.listThreads(ALICE, { limit: 200 }),
          await reopened.listThreads(BOB, { limit: 200 }),
        ]).toStrictEqual(listed);
        const someNode = Object.keys(drivers[1]!.graph.nodes)[2]!;
        expect(await reopened.findNodeThread(someNode)).toBe(drivers[1]!.threadId);
      });

      it('recovers after a reopen the text persisted before it', async (context) => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'Persisted prefix');

        const reopened = await reopen(context);

        expect(await reopened.interruptStreamingNodes(clock.now())).toEqual([driver.threadId]);
        const { graph } = await loadSound(reopened, driver.threadId);
        expect(graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Persisted prefix' });
      });

      it('recovers after a reopen the reasoning persisted before it', async (context) => {
        const driver = await startThread();
        const { assistantNodeId } = await driver.prompt('Hello');
        await driver.stream(assistantNodeId, 'Persisted reasoning', 'reasoning');

        const reopened = await reopen(context);

        expect(await reopened.interruptStreamingNodes(clock.now())).toEqual([driver.threadId]);
        const { graph } = await loadSound(reopened, driver.threadId);
        expect(graph.nodes[assistantNodeId]).toMatchObject({
          status: 'interrupted',
          content: '',
          reasoning: 'Persisted reasoning',
        });
      });
    });

    describeAttachmentContract({ store: () => store, startThread });

    describeThreadOperationsContract({
      store: () => store,
      clock: () => clock,
      startThread,
      reopen: async () => {
        if (!fixture.reopen) return undefined;
        await store.close();
        store = await fixture.reopen();
        return store;
      },
    });

    it('gives back after any sequence of operations exactly the graph the protocol computes', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(operationArbitrary, { maxLength: 25 }), async (operations) => {
          const driver = await startThread();
          for (const operation of operations) {
            await applyOperation(driver, operation);
            await driver.expectStoreToMatch();
          }
        }),
      );
    });
  });
}
