import type { OperationContext } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import {
  completion,
  expectError,
  listThreads,
  nextUpdate,
  openThread,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import { useLocalInstances } from './local-instances.js';

const ANSWER = { chunks: ['Rivers ', 'run.'], gated: false };

/** Rename, delete, search and import from any instance of a cluster (PROTOCOL.md §24). */
describe('thread operations on servers sharing a store through a LocalCluster', () => {
  const instances = useLocalInstances();

  it('a stop sent to another instance runs the hooks of the one writing the answer, told who asked', async () => {
    const [writing, other] = await instances.start(2, { chunks: ['Rivers ', 'run.'] });
    const toldWriting: OperationContext[] = [];
    const toldOther: OperationContext[] = [];
    writing!.server.on('beforeStop', (context) => void toldWriting.push(context));
    other!.server.on('beforeStop', (context) => void toldOther.push(context));
    const writer = await writing!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const { assistantNodeId } = await prompt(writer, threadId, 'Which river is the longest?');
    await writing!.model.call(0);

    const stopper = await other!.connect({ did: 'did:web:stopper.example' });
    await openThread(stopper, { threadId });
    stopper.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId });
    await stopper.next('CPP_STREAM_HALTED');
    expect(toldWriting.map(({ type, identity }) => [type, identity.did])).toEqual([
      ['CPP_STREAM_STOP', 'did:web:stopper.example'],
    ]);
    expect(toldOther).toEqual([]);
  });

  it("rename on one instance reaches the thread's clients on the other", async () => {
    const [first, second] = await instances.start(2, ANSWER);
    const writer = await first!.connect();
    const reader = await second!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    await openThread(reader, { threadId, patches: true });
    const exchange = await prompt(writer, threadId, 'Which river is the longest?');
    await completion(reader, threadId, exchange.assistantNodeId);

    reader.send('CPP_THREAD_RENAME', { threadId, title: 'Long rivers', expectedVersion: 2 });
    expect(await nextUpdate(writer, threadId, (update) => update.version === 3)).toEqual({
      threadId,
      version: 3,
      rootNodeId: exchange.userNodeId,
      activeHeadMessageId: exchange.assistantNodeId,
      nodes: {},
      title: 'Long rivers',
    });
    expect((await requestSync(writer, threadId)).title).toBe('Long rivers');
    expect((await instances.store.loadThread(threadId))?.title).toBe('Long rivers');
  });

  it('delete on one instance tells and unsubscribes the clients of every instance, and the thread is gone on each', async () => {
    const [first, second] = await instances.start(2, ANSWER);
    const owner = await first!.connect();
    const watcher = await second!.connect();
    const { threadId } = await openThread(owner, { patches: true });
    await openThread(watcher, { threadId });
    const exchange = await prompt(owner, threadId, 'Delete me later');
    await completion(watcher, threadId, exchange.assistantNodeId);

    const remover = await second!.connect();
    remover.send('CPP_THREAD_DELETE', { threadId });
    for (const client of [owner, watcher, remover])
      expect((await client.next('CPP_THREAD_DELETED')).payload).toEqual({ threadId });
    expect(await instances.store.loadThread(threadId)).toBeUndefined();
    for (const client of [owner, watcher]) {
      client.send('CPP_SYNC_REQUEST', { threadId }, { id: 'gone' });
      await expectError(client, 'NOT_FOUND', { refId: 'gone' });
    }
    expect(await listThreads(owner)).toEqual([]);
    // Retired on every instance: opened again on the one that did not delete it, it is not created anew.
    owner.send('CPP_THREAD_OPEN', { threadId }, { id: 'reopen' });
    await expectError(owner, 'NOT_FOUND', { refId: 'reopen' });
    expect(await instances.store.loadThread(threadId)).toBeUndefined();
  });

  it('search and import from either instance see the same threads', async () => {
    const [first, second] = await instances.start(2, ANSWER);
    const one = await first!.connect();
    const other = await second!.connect();
    const { threadId } = await openThread(one, { patches: true });
    const exchange = await prompt(one, threadId, 'Tell me about the Danube');
    await completion(one, threadId, exchange.assistantNodeId);

    other.send('CPP_THREAD_SEARCH', { query: 'danube' });
    expect((await other.next('CPP_SEARCH_RESULTS')).payload.hits.map((hit) => hit.nodeId)).toEqual([
      null,
      exchange.userNodeId,
    ]);
    other.send('CPP_THREAD_IMPORT', {
      format: 'chatgpt',
      document: [{ title: 'Imported', mapping: {}, current_node: null }],
    });
    const [imported] = (await other.next('CPP_THREADS_IMPORTED')).payload.threads;
    expect((await openThread(one, { threadId: imported!.threadId })).title).toBe('Imported');
  });
});
