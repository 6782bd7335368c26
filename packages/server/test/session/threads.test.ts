import { once } from 'node:events';
import { newMessageId, newThreadId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import {
  chunksReceived,
  completion,
  listThreads,
  nextUpdate,
  openThread,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

describe('CPP_THREAD_OPEN', () => {
  it('without a threadId creates an empty thread at version 0', async () => {
    const sync = await openThread(await fixture.connect());
    expect(sync.threadId).toMatch(/^thread_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(sync).toEqual({
      threadId: sync.threadId,
      rootNodeId: null,
      activeHeadMessageId: null,
      nodes: {},
      version: 0,
      title: '',
    });
  });

  it('with an unknown threadId creates the thread with that id, owned by the connection', async () => {
    const client = await fixture.connect({ did: 'did:key:zOwner' });
    const threadId = newThreadId();
    expect(await openThread(client, { threadId })).toMatchObject({ threadId, version: 0, nodes: {} });
    expect((await listThreads(client)).map((thread) => thread.threadId)).toEqual([threadId]);
  });

  it('with a known threadId opens that thread as it is', async () => {
    await fixture.start({ model: new ScriptedModel({ chunks: ['Hi'] }, { gated: false }) });
    const first = await fixture.connect();
    const { threadId } = await openThread(first, { patches: true });
    const exchange = await prompt(first, threadId, 'Hello');
    await completion(first, threadId, exchange.assistantNodeId);
    const reopened = await openThread(await fixture.connect(), { threadId });
    expect(reopened).toEqual(await requestSync(first, threadId));
    expect(reopened.nodes[exchange.assistantNodeId]).toMatchObject({ content: 'Hi', status: 'completed' });
  });

  it('applies a prompt sent right behind the open that creates the thread, without waiting for the sync', async () => {
    await fixture.start({ model: new ScriptedModel({ chunks: ['Hi'] }, { gated: false }) });
    const client = await fixture.connect();
    const threadId = newThreadId();
    const newNodeId = newMessageId();
    client.send('CPP_THREAD_OPEN', { threadId, patches: true });
    client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: 'Straight away', newNodeId });
    expect((await client.next('CPP_SYNC_GRAPH')).payload).toMatchObject({ threadId, version: 0 });
    const update = await nextUpdate(client, threadId);
    expect(update.nodes[newNodeId]).toMatchObject({ role: 'user', content: 'Straight away' });
    expect(client.all('CPP_ERROR')).toEqual([]);
  });
});

describe('CPP_THREAD_CLOSE', () => {
  it('unsubscribes without an answer, while the generation keeps running for the others', async () => {
    const model = new ScriptedModel({ chunks: ['one', ' two', ' three'] });
    await fixture.start({ model });
    const [leaving, staying] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(leaving, { patches: true });
    const { assistantNodeId } = await prompt(leaving, threadId, 'Count');
    await openThread(staying, { threadId, patches: true });
    const call = await model.call(0);
    call.release();
    await chunksReceived(leaving, assistantNodeId, 1);

    leaving.send('CPP_THREAD_CLOSE', { threadId });
    await listThreads(leaving);
    const afterClose = leaving.mark();
    call.releaseAll();
    const { update } = await completion(staying, threadId, assistantNodeId);
    expect(update.nodes[assistantNodeId]?.content).toBe('one two three');

    await listThreads(leaving);
    expect(leaving.since(afterClose).map((frame) => frame.type)).toEqual(['CPP_THREADS']);
  });
});

describe('a thread nobody watches', () => {
  it('keeps its answer streaming after its only subscriber disconnects, for whoever opens it next', async () => {
    const model = new ScriptedModel({ chunks: ['still', ' here'] });
    const server = await fixture.start({ model });
    const leaving = await fixture.connect();
    const { threadId } = await openThread(leaving, { patches: true });
    const { assistantNodeId } = await prompt(leaving, threadId, 'Keep going');
    const call = await model.call(0);
    call.release();
    await chunksReceived(leaving, assistantNodeId, 1);
    const gone = once(server, 'disconnect');
    await leaving.close();
    await gone;

    const later = await fixture.connect();
    expect((await openThread(later, { threadId, patches: true })).nodes[assistantNodeId]).toMatchObject({
      status: 'streaming',
      content: 'still',
    });
    call.releaseAll();
    const { update } = await completion(later, threadId, assistantNodeId);
    expect(update.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: 'still here' });
  });
});

describe('CPP_THREAD_LIST', () => {
  it("lists only this identity's threads, most recently updated first, with title, version and node count", async () => {
    const model = new ScriptedModel({ chunks: ['ok'] });
    await fixture.start({ model });
    const client = await fixture.connect({ did: 'did:key:zLister' });
    await openThread(await fixture.connect({ did: 'did:key:zSomeoneElse' }));
    const older = (await openThread(client, { patches: true })).threadId;
    const newer = (await openThread(client, { patches: true })).threadId;
    const [newerSummary] = await listThreads(client);
    expect(newerSummary?.threadId).toBe(newer);

    const longPrompt = `  Tell me\n\tabout   ${'trees '.repeat(20)}`;
    const { assistantNodeId } = await prompt(client, older, longPrompt);
    const call = await model.call(0);
    // The answer ends strictly after `newer` was last updated, so that `older` is then the most recent.
    while (Date.now() <= newerSummary!.updatedAt) await new Promise((resolve) => setImmediate(resolve));
    call.releaseAll();
    await completion(client, older, assistantNodeId);

    const threads = await listThreads(client);
    expect(threads.map((thread) => thread.threadId)).toEqual([older, newer]);
    const title = `Tell me about ${'trees '.repeat(20)}`.trim().slice(0, 80);
    expect(threads[0]).toMatchObject({ title, version: 2, nodeCount: 2 });
    expect(threads[0]!.title).toHaveLength(80);
    expect(threads[1]).toMatchObject({ title: '', version: 0, nodeCount: 0 });
    expect(threads[0]!.updatedAt).toBeGreaterThan(threads[1]!.updatedAt);
    expect((await requestSync(client, older)).title).toBe(title);
  });
});
