import { once } from 'node:events';
import { CPPError, ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import type { ConnectionEvent, OperationEvent, PivotContext } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import {
  completion,
  expectError,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread, type StreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();

function sendPivot(
  setup: StreamingThread,
  newBranchNodeId: string,
  fields: Record<string, unknown> = {},
  id?: string,
): void {
  const payload = {
    interruptedNodeId: setup.assistantNodeId,
    activeThreadId: setup.threadId,
    userPrompt: 'Rust instead',
    newBranchNodeId,
    ...fields,
  };
  setup.client.send('CPP_PIVOT_INIT', payload, { id });
}

describe("server.on('pivot')", () => {
  it('runs the listener instead of the default pivot, with the pivot in its context', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world', '!'], 2);
    const contexts: PivotContext[] = [];
    const abortedBetweenSteps: boolean[] = [];
    let spawned: { assistantNodeId: string } | undefined;
    fixture.server.on('pivot', async (context) => {
      contexts.push(context);
      await context.abortActiveStream();
      abortedBetweenSteps.push(setup.call.signal.aborted);
      spawned = await context.spawnSiblingStream();
    });

    const newBranchNodeId = newMessageId();
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead', {
      newBranchNodeId,
      receivedContentLength: 8,
    });
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({
      threadId: setup.threadId,
      interruptedNodeId: setup.assistantNodeId,
      userPrompt: 'Rust instead',
      newBranchNodeId,
      receivedContentLength: 8,
      identity: { did: 'anonymous', verified: false },
    });
    expect(abortedBetweenSteps).toEqual([true]);
    expect(spawned).toEqual({ assistantNodeId: branch.assistantNodeId });
    expect(setup.client.all('CPP_STREAM_HALTED').map((frame) => frame.payload)).toMatchObject([
      { finalContentLength: 8, reason: 'pivot' },
    ]);
    expect(branch.update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello wo' });
  });

  it('completes the pivot a listener leaves undone: one that neither aborts nor spawns gets the default pivot, after it settles', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    const aborted: boolean[] = [];
    fixture.server.on('pivot', async () => {
      await Promise.resolve();
      aborted.push(setup.call.signal.aborted);
    });
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead');
    expect(aborted).toEqual([false]);
    expect(setup.client.all('CPP_STREAM_HALTED').map((frame) => frame.payload)).toMatchObject([
      { interruptedNodeId: setup.assistantNodeId, finalContentLength: 5, reason: 'pivot' },
    ]);
    expect(branch.update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello' });
    await completion(setup.client, setup.threadId, branch.assistantNodeId);
  });

  it('spawns the branch of a listener that only aborts, once it settles', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    fixture.server.on('pivot', async (context) => {
      await context.abortActiveStream();
    });
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead');
    expect(setup.client.all('CPP_STREAM_HALTED')).toHaveLength(1);
    expect(branch.update.nodes[branch.userNodeId]).toMatchObject({ role: 'user', content: 'Rust instead' });
    expect(branch.update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello' });
    await completion(setup.client, setup.threadId, branch.assistantNodeId);
  });

  it('refuses the pivot with INTERNAL, the thread unchanged, when the listener throws before either step', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    const errors: unknown[] = [];
    fixture.server.on('error', (error) => errors.push(error));
    fixture.server.on('pivot', async () => {
      throw new Error('listener bug');
    });
    const before = await requestSync(setup.client, setup.threadId);
    sendPivot(setup, newMessageId(), {}, 'pivot-frame');
    await expectError(setup.client, ErrorCode.INTERNAL, { refId: 'pivot-frame', refType: 'CPP_PIVOT_INIT' });
    expect(errors).toEqual([new Error('listener bug')]);
    expect(await requestSync(setup.client, setup.threadId)).toEqual(before);
    expect(setup.call.signal.aborted).toBe(false);
    setup.call.releaseAll();
    await completion(setup.client, setup.threadId, setup.assistantNodeId);
    expect(setup.client.all('CPP_STREAM_HALTED')).toEqual([]);
  });

  it("refuses the pivot with the code of a listener's CPPError, the thread unchanged", async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    fixture.server.on('pivot', async () => {
      throw new CPPError(ErrorCode.FORBIDDEN, 'no pivots in this thread');
    });
    const before = await requestSync(setup.client, setup.threadId);
    sendPivot(setup, newMessageId(), {}, 'pivot-frame');
    await expectError(setup.client, ErrorCode.FORBIDDEN, { message: 'no pivots in this thread', refId: 'pivot-frame' });
    expect(await requestSync(setup.client, setup.threadId)).toEqual(before);
  });

  it('answers INTERNAL when the listener throws, still committing the stream it aborted', async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    const errors: unknown[] = [];
    fixture.server.on('error', (error) => errors.push(error));
    fixture.server.on('pivot', async (context) => {
      await context.abortActiveStream();
      throw new Error('listener bug');
    });
    setup.client.send(
      'CPP_PIVOT_INIT',
      {
        interruptedNodeId: setup.assistantNodeId,
        activeThreadId: setup.threadId,
        userPrompt: 'Rust instead',
        newBranchNodeId: newMessageId(),
      },
      { id: 'pivot-frame' },
    );
    const update = await nextUpdate(setup.client, setup.threadId);
    expect(update.nodes[setup.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello' });
    await expectError(setup.client, ErrorCode.INTERNAL, { refId: 'pivot-frame', refType: 'CPP_PIVOT_INIT' });
    expect(errors).toEqual([new Error('listener bug')]);
    const next = await prompt(setup.client, setup.threadId, 'Still usable');
    await completion(setup.client, setup.threadId, next.assistantNodeId);
  });
});

describe('notification events', () => {
  it("emits 'connection' and 'disconnect' with the connection's identity", async () => {
    const server = await fixture.start();
    const connections: ConnectionEvent[] = [];
    server.on('connection', (event) => connections.push(event));
    const client = await fixture.connect({ did: 'did:key:zEvents' });
    await openThread(client);
    expect(connections).toEqual([
      { connectionId: expect.any(String), identity: { did: 'did:key:zEvents', verified: false } },
    ]);
    const disconnected = once(server, 'disconnect');
    await client.close();
    expect(await disconnected).toEqual(connections);
  });

  it("emits 'prompt', 'stop' and 'anchor' for frames carried out, and not for refused ones", async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    const events: Array<[string, OperationEvent]> = [];
    for (const name of ['prompt', 'stop', 'anchor'] as const)
      fixture.server.on(name, (event) => events.push([name, event]));

    setup.client.send('CPP_PROMPT', { activeThreadId: setup.threadId, userPrompt: 'Busy?', newNodeId: newMessageId() });
    await expectError(setup.client, ErrorCode.THREAD_BUSY);
    setup.client.send('CPP_STREAM_STOP', { activeThreadId: setup.threadId, nodeId: setup.assistantNodeId });
    await nextUpdate(setup.client, setup.threadId);
    setup.client.send('CPP_ANCHOR_HEAD', { activeThreadId: setup.threadId, targetNodeId: setup.userNodeId });
    await nextUpdate(setup.client, setup.threadId);
    const next = await prompt(setup.client, setup.threadId, 'Now');
    await completion(setup.client, setup.threadId, next.assistantNodeId);

    expect(events.map(([name, event]) => [name, event.frame.type, event.identity.did])).toEqual([
      ['stop', 'CPP_STREAM_STOP', 'anonymous'],
      ['anchor', 'CPP_ANCHOR_HEAD', 'anonymous'],
      ['prompt', 'CPP_PROMPT', 'anonymous'],
    ]);
    expect(events.at(-1)?.[1].frame.payload).toMatchObject({ userPrompt: 'Now', newNodeId: next.userNodeId });
    expect(new Set(events.map(([, event]) => event.connectionId)).size).toBe(1);
  });

  it("emits 'regenerate' and 'deleteBranch' for frames carried out, and not for refused ones", async () => {
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1);
    const events: Array<[string, OperationEvent]> = [];
    for (const name of ['regenerate', 'deleteBranch'] as const)
      fixture.server.on(name, (event) => events.push([name, event]));

    setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: setup.assistantNodeId });
    await expectError(setup.client, ErrorCode.THREAD_BUSY);
    const newNodeId = newMessageId();
    setup.client.send('CPP_REGENERATE', { activeThreadId: setup.threadId, userNodeId: setup.userNodeId, newNodeId });
    await completion(setup.client, setup.threadId, newNodeId);
    setup.client.send('CPP_BRANCH_DELETE', { activeThreadId: setup.threadId, nodeId: setup.assistantNodeId });
    await nextUpdate(setup.client, setup.threadId, (update) => 'removedNodeIds' in update);

    expect(events.map(([name, event]) => [name, event.frame.type])).toEqual([
      ['regenerate', 'CPP_REGENERATE'],
      ['deleteBranch', 'CPP_BRANCH_DELETE'],
    ]);
  });
});
