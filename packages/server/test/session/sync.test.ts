import { findInvariantViolations, graphFromSync } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import {
  chunksOf,
  chunksReceived,
  completion,
  nextUpdate,
  openThread,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { mirrorOf } from '../support/thread-mirror.js';

const fixture = useServer();
const ANSWER = ['The ', 'quick ', 'brown ', 'fox'];

async function start(): Promise<ScriptedModel> {
  const model = new ScriptedModel({ chunks: ANSWER });
  await fixture.start({ model });
  return model;
}

describe('full-sync mode (no patches requested)', () => {
  it('sends a whole CPP_SYNC_GRAPH after every structural change, and never a patch', async () => {
    const model = await start();
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    const { userNodeId, assistantNodeId, update } = await prompt(client, threadId, 'Say something');
    expect(update).toMatchObject({
      version: 1,
      rootNodeId: userNodeId,
      activeHeadMessageId: assistantNodeId,
      title: 'Say something',
    });
    expect(Object.keys(update.nodes).sort()).toEqual([userNodeId, assistantNodeId].sort());

    const call = await model.call(0);
    call.release(2);
    await chunksReceived(client, assistantNodeId, 2);
    const midStream = await requestSync(client, threadId);
    expect(midStream.version).toBe(1);
    expect(midStream.nodes[assistantNodeId]).toMatchObject({ status: 'streaming', content: 'The quick ' });

    call.releaseAll();
    const finished = (await completion(client, threadId, assistantNodeId)).update;
    expect(finished).toMatchObject({ version: 2, activeHeadMessageId: assistantNodeId });
    expect(finished.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: ANSWER.join('') });
    expect(client.all('CPP_GRAPH_PATCH')).toEqual([]);
    expect(client.all('CPP_SYNC_GRAPH').map((frame) => frame.payload.version)).toEqual([0, 1, 1, 2]);
  });
});

describe('patch mode (patches: true)', () => {
  it('sends CPP_GRAPH_PATCH with only the nodes each change added or changed, one version at a time', async () => {
    const model = await start();
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });

    const first = await prompt(client, threadId, 'First');
    expect(first.update).toEqual({
      threadId,
      version: 1,
      rootNodeId: first.userNodeId,
      activeHeadMessageId: first.assistantNodeId,
      nodes: { [first.userNodeId]: expect.anything(), [first.assistantNodeId]: expect.anything() },
      title: 'First',
    });
    (await model.call(0)).releaseAll();
    const firstDone = (await completion(client, threadId, first.assistantNodeId)).update;
    expect(firstDone).toMatchObject({
      version: 2,
      rootNodeId: first.userNodeId,
      activeHeadMessageId: first.assistantNodeId,
    });
    expect(Object.keys(firstDone.nodes)).toEqual([first.assistantNodeId]);

    const second = await prompt(client, threadId, 'Second');
    expect(second.update.version).toBe(3);
    expect(Object.keys(second.update.nodes).sort()).toEqual(
      [first.assistantNodeId, second.userNodeId, second.assistantNodeId].sort(),
    );
    expect(second.update.nodes[first.assistantNodeId]).toMatchObject({
      status: 'completed',
      content: ANSWER.join(''),
      childrenIds: [second.userNodeId],
    });
    expect(second.update.nodes[second.userNodeId]).toMatchObject({
      parentId: first.assistantNodeId,
      childrenIds: [second.assistantNodeId],
    });
    expect(second.update.nodes[second.assistantNodeId]).toMatchObject({
      parentId: second.userNodeId,
      status: 'streaming',
      content: '',
    });

    client.send('CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: first.userNodeId });
    const anchored = await nextUpdate(client, threadId, (update) => update.version === 4);
    expect(anchored).toEqual({
      threadId,
      version: 4,
      rootNodeId: first.userNodeId,
      activeHeadMessageId: first.userNodeId,
      nodes: {},
      title: 'First',
    });

    (await model.call(1)).releaseAll();
    const secondDone = (await completion(client, threadId, second.assistantNodeId)).update;
    expect(secondDone.version).toBe(5);
    expect(Object.keys(secondDone.nodes)).toEqual([second.assistantNodeId]);

    expect(client.all('CPP_SYNC_GRAPH')).toHaveLength(1);
    expect(client.all('CPP_GRAPH_PATCH').map((frame) => frame.payload.version)).toEqual([1, 2, 3, 4, 5]);
    const mirror = mirrorOf(client.frames, threadId);
    expect(mirror.problems).toEqual([]);
    expect(mirror.graph).toEqual(graphFromSync(await requestSync(client, threadId)));
  });
});

describe('joining a thread mid-stream', () => {
  it('gets the text streamed so far in CPP_SYNC_GRAPH, then the chunks from where it ends', async () => {
    const model = await start();
    const [author, joiner] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(author, { patches: true });
    const { assistantNodeId } = await prompt(author, threadId, 'Stream please');
    const call = await model.call(0);
    call.release(2);
    await chunksReceived(author, assistantNodeId, 2);

    const joined = await openThread(joiner, { threadId, patches: true });
    expect(joined.nodes[assistantNodeId]).toMatchObject({ status: 'streaming', content: 'The quick ' });
    call.releaseAll();
    await completion(joiner, threadId, assistantNodeId);

    const [firstChunk] = chunksOf(joiner, assistantNodeId);
    expect(firstChunk).toMatchObject({ offset: 'The quick '.length, delta: 'brown ' });
    expect(joined.nodes[assistantNodeId]!.content + streamedText(joiner, assistantNodeId)).toBe(ANSWER.join(''));
    const mirror = mirrorOf(joiner.frames, threadId);
    expect(mirror.problems).toEqual([]);
    expect(mirror.graph).toEqual(graphFromSync(await requestSync(joiner, threadId)));
  });
});

describe('implicit subscription', () => {
  it('subscribes, in full-sync mode, a client that prompts in a thread it never opened', async () => {
    const model = await start();
    const [owner, stranger] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(owner, { patches: true });
    const { assistantNodeId } = await prompt(stranger, threadId, 'Me too');
    expect(stranger.all('CPP_SYNC_GRAPH')).toHaveLength(1);
    (await model.call(0)).releaseAll();
    const { update } = await completion(stranger, threadId, assistantNodeId);
    expect(streamedText(stranger, assistantNodeId)).toBe(ANSWER.join(''));
    expect(update.version).toBe(2);
    expect(stranger.all('CPP_GRAPH_PATCH')).toEqual([]);
    expect(findInvariantViolations(mirrorOf(stranger.frames, threadId).graph!)).toEqual([]);
  });

  it('subscribes a client that only asked for a sync to the changes that follow', async () => {
    const model = await start();
    const [owner, watcher] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(owner, { patches: true });
    await requestSync(watcher, threadId);
    const { userNodeId, assistantNodeId } = await prompt(owner, threadId, 'Watch this');
    expect((await nextUpdate(watcher, threadId)).nodes[userNodeId]).toBeDefined();
    (await model.call(0)).releaseAll();
    await completion(watcher, threadId, assistantNodeId);
  });
});
