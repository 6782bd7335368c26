import { ErrorCode, type ServerFrame, type ThreadSummary } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { completion, expectError, listPage, listThreads, openThread, prompt } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

async function openThreads(client: RawClient, count: number): Promise<string[]> {
  const threadIds: string[] = [];
  for (let index = 0; index < count; index += 1) threadIds.push((await openThread(client)).threadId);
  return threadIds;
}

/** The frames of the thread list's subscription received since `mark`. */
function listUpdates(client: RawClient, mark: number): ServerFrame[] {
  return client
    .since(mark)
    .filter((frame) => frame.type === 'CPP_THREAD_UPDATED' || frame.type === 'CPP_THREAD_DELETED');
}

describe('CPP_THREAD_LIST in pages', () => {
  it('answers {} with the first 50 threads and a cursor, which gives the rest', async () => {
    const client = await fixture.connect();
    await openThreads(client, 52);
    const whole = (await listPage(client, { limit: 200 })).threads;
    expect(whole).toHaveLength(52);

    const first = await listPage(client);
    expect(first.threads).toEqual(whole.slice(0, 50));
    expect(first.nextCursor).toEqual(expect.any(String));
    const rest = await listPage(client, { cursor: first.nextCursor! });
    expect(rest).toEqual({ threads: whole.slice(50), nextCursor: null });
  });

  it('walks every thread once with pages of `limit`, the last one telling there are no more', async () => {
    const client = await fixture.connect();
    const opened = await openThreads(client, 7);
    const seen: ThreadSummary[] = [];
    let page = await listPage(client, { limit: 3 });
    const sizes = [page.threads.length];
    seen.push(...page.threads);
    while (page.nextCursor !== null) {
      page = await listPage(client, { limit: 3, cursor: page.nextCursor });
      sizes.push(page.threads.length);
      seen.push(...page.threads);
    }
    expect(sizes).toEqual([3, 3, 1]);
    // Opened one after the other, in the same millisecond or not: newest first.
    expect(seen.map((thread) => thread.threadId)).toEqual([...opened].reverse());
  });

  it('refuses a cursor it did not make with INVALID_FRAME, naming the frame', async () => {
    const client = await fixture.connect();
    for (const cursor of ['page-2', '12.not-a-thread', '99999999999999999.thread_a', '.thread_a']) {
      client.send('CPP_THREAD_LIST', { cursor }, { id: `list-${cursor}` });
      await expectError(client, ErrorCode.INVALID_FRAME, { refId: `list-${cursor}`, refType: 'CPP_THREAD_LIST' });
    }
  });
});

describe('the thread list subscription', () => {
  it('tells a subscribed connection of each thread of its identity created, changed or deleted, and nothing else', async () => {
    const model = new ScriptedModel({ chunks: ['Fine'] });
    await fixture.start({ model });
    const watcher = await fixture.connect({ did: 'did:key:zWatcher' });
    const actor = await fixture.connect({ did: 'did:key:zWatcher' });
    const stranger = await fixture.connect({ did: 'did:key:zStranger' });
    await listPage(watcher, { subscribe: true });
    const mark = watcher.mark();

    await openThread(stranger);
    const { threadId } = await openThread(actor, { patches: true });
    const { assistantNodeId } = await prompt(actor, threadId, 'How are you?');
    (await model.call(0)).releaseAll();
    await completion(actor, threadId, assistantNodeId);
    actor.send('CPP_THREAD_RENAME', { threadId, title: 'Small talk' });
    await watcher.next('CPP_THREAD_UPDATED', (frame) => frame.payload.thread.title === 'Small talk');
    actor.send('CPP_THREAD_DELETE', { threadId });
    await watcher.next('CPP_THREAD_DELETED');

    const updates = listUpdates(watcher, mark);
    expect(updates.map((frame) => frame.type)).toEqual([
      'CPP_THREAD_UPDATED',
      'CPP_THREAD_UPDATED',
      'CPP_THREAD_UPDATED',
      'CPP_THREAD_UPDATED',
      'CPP_THREAD_DELETED',
    ]);
    const summaries = updates.flatMap((frame) => (frame.type === 'CPP_THREAD_UPDATED' ? [frame.payload.thread] : []));
    expect(summaries.map(({ threadId: id, version, nodeCount, title }) => ({ id, version, nodeCount, title }))).toEqual(
      [
        { id: threadId, version: 0, nodeCount: 0, title: '' },
        { id: threadId, version: 1, nodeCount: 2, title: 'How are you?' },
        { id: threadId, version: 2, nodeCount: 2, title: 'How are you?' },
        { id: threadId, version: 3, nodeCount: 2, title: 'Small talk' },
      ],
    );
    expect(updates.at(-1)).toMatchObject({ payload: { threadId } });
    // The actor is not subscribed to the list: it hears of its thread only as the thread's subscriber.
    expect(actor.all('CPP_THREAD_UPDATED')).toEqual([]);
  });

  it('ends with subscribe: false; a list without subscribe leaves it as it was', async () => {
    const watcher = await fixture.connect();
    const actor = await fixture.connect();
    await listPage(watcher, { subscribe: true });
    await listPage(watcher, { limit: 1 });
    await openThread(actor);
    await watcher.next('CPP_THREAD_UPDATED');

    await listPage(watcher, { subscribe: false });
    const mark = watcher.mark();
    await openThread(actor);
    await listThreads(watcher);
    expect(listUpdates(watcher, mark)).toEqual([]);
  });

  it('with pages read while threads change, shows every thread once merged by version', async () => {
    const model = new ScriptedModel({ chunks: ['ok'] });
    await fixture.start({ model });
    const client = await fixture.connect();
    const actor = await fixture.connect();
    const opened = await openThreads(actor, 5);
    const first = await listPage(client, { limit: 2, subscribe: true });
    expect(first.threads.map((thread) => thread.threadId)).toEqual([opened[4], opened[3]]);

    // The oldest thread changes between the pages: it moves ahead of the cursor, so later pages leave it out.
    await prompt(actor, opened[0]!, 'Moved to the top');
    const moved = await client.next('CPP_THREAD_UPDATED', (frame) => frame.payload.thread.version === 1);
    const rest = [];
    let page = first;
    while (page.nextCursor !== null) {
      page = await listPage(client, { limit: 2, cursor: page.nextCursor });
      rest.push(...page.threads);
    }
    expect(rest.map((thread) => thread.threadId)).toEqual([opened[2], opened[1]]);

    const merged = new Map<string, ThreadSummary>();
    for (const thread of [...first.threads, moved.payload.thread, ...rest]) {
      const known = merged.get(thread.threadId);
      if (!known || known.version < thread.version) merged.set(thread.threadId, thread);
    }
    expect([...merged.keys()].sort()).toEqual([...opened].sort());
    expect(merged.get(opened[0]!)?.version).toBe(1);
  });
});
