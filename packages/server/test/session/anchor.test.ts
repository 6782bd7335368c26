import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { completion, expectError, nextUpdate, prompt, requestSync, type Exchange } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread, type StreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();

function sendAnchor(setup: StreamingThread, targetNodeId: string, fields: Record<string, unknown> = {}): void {
  setup.client.send(
    'CPP_ANCHOR_HEAD',
    { activeThreadId: setup.threadId, targetNodeId, ...fields },
    { id: 'anchor-frame' },
  );
}

/** A thread with two finished exchanges (versions 1–4): the first answer released, the second streamed freely. */
async function twoExchanges(): Promise<{ setup: StreamingThread; second: Exchange }> {
  const setup = await startStreamingThread(fixture, ['First answer'], 0);
  setup.call.releaseAll();
  await completion(setup.client, setup.threadId, setup.assistantNodeId);
  const second = await prompt(setup.client, setup.threadId, 'Second question');
  await completion(setup.client, setup.threadId, second.assistantNodeId);
  return { setup, second };
}

describe('CPP_ANCHOR_HEAD', () => {
  it('moves the head in a change of its own, and the next prompt grows from the anchored node, user or assistant', async () => {
    const { setup } = await twoExchanges();
    const { client, threadId } = setup;
    sendAnchor(setup, setup.userNodeId);
    expect(await nextUpdate(client, threadId)).toEqual({
      threadId,
      version: 5,
      rootNodeId: setup.userNodeId,
      activeHeadMessageId: setup.userNodeId,
      nodes: {},
      title: 'Tell me about Clojure',
    });
    const underUser = await prompt(client, threadId, 'From the question');
    expect(underUser.update.nodes[underUser.userNodeId]?.parentId).toBe(setup.userNodeId);
    await completion(client, threadId, underUser.assistantNodeId);

    sendAnchor(setup, setup.assistantNodeId);
    expect((await nextUpdate(client, threadId)).activeHeadMessageId).toBe(setup.assistantNodeId);
    const underAssistant = await prompt(client, threadId, 'From the first answer');
    expect(underAssistant.update.nodes[setup.assistantNodeId]?.childrenIds).toHaveLength(2);
    expect(underAssistant.update.nodes[underAssistant.userNodeId]?.parentId).toBe(setup.assistantNodeId);
  });

  it('does not stop a running stream, whose completion leaves the head where it was anchored', async () => {
    const setup = await startStreamingThread(fixture, ['Still', ' going'], 1);
    const { client, threadId } = setup;
    sendAnchor(setup, setup.userNodeId);
    expect((await nextUpdate(client, threadId)).activeHeadMessageId).toBe(setup.userNodeId);
    expect(setup.call.signal.aborted).toBe(false);

    setup.call.releaseAll();
    const { update } = await completion(client, threadId, setup.assistantNodeId);
    expect(update).toMatchObject({ version: 3, activeHeadMessageId: setup.userNodeId });
    expect(update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'completed', content: 'Still going' });
    expect(client.all('CPP_STREAM_HALTED')).toEqual([]);
  });

  it('accepts a current expectedVersion, and applies frames in the order received', async () => {
    const { setup } = await twoExchanges();
    const newNodeId = newMessageId();
    sendAnchor(setup, setup.userNodeId, { expectedVersion: 4 });
    setup.client.send('CPP_PROMPT', {
      activeThreadId: setup.threadId,
      userPrompt: 'Right after',
      newNodeId,
      expectedVersion: 5,
    });
    const update = await nextUpdate(
      setup.client,
      setup.threadId,
      (candidate) => candidate.nodes[newNodeId] !== undefined,
    );
    expect(update.nodes[newNodeId]?.parentId).toBe(setup.userNodeId);
    expect(setup.client.all('CPP_ERROR')).toEqual([]);
  });

  it('is refused with CONFLICT for a stale expectedVersion, changing nothing', async () => {
    const { setup, second } = await twoExchanges();
    const before = await requestSync(setup.client, setup.threadId);
    sendAnchor(setup, setup.userNodeId, { expectedVersion: 3 });
    await expectError(setup.client, ErrorCode.CONFLICT, { refId: 'anchor-frame', refType: 'CPP_ANCHOR_HEAD' });
    const after = await requestSync(setup.client, setup.threadId);
    expect(after).toEqual(before);
    expect(after.activeHeadMessageId).toBe(second.assistantNodeId);
  });

  it('names an unknown target NOT_FOUND before it looks at expectedVersion', async () => {
    const { setup } = await twoExchanges();
    sendAnchor(setup, newMessageId(), { expectedVersion: 3 });
    await expectError(setup.client, ErrorCode.NOT_FOUND, { refId: 'anchor-frame', refType: 'CPP_ANCHOR_HEAD' });
  });
});
