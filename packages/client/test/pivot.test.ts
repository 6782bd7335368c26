import { isMessageId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { contentOf, mirrorUntil, useFakeSession } from './support/session.js';

describe('CPPClient.pivot', () => {
  const session = useFakeSession();

  it('halts the streaming node, sends how much of it the client holds, and streams the new branch', async () => {
    const client = session.connect();
    const first = await session.startPrompt(client);
    const { threadId, assistantNodeId: interruptedNodeId } = first;
    session.server.chunk(threadId, interruptedNodeId, 'Clojure is a Lisp');
    await mirrorUntil(client, threadId, () => contentOf(client, threadId, interruptedNodeId) === 'Clojure is a Lisp');

    const deltas: string[] = [];
    const pivot = client.pivot({ userPrompt: 'Rust instead.', onStream: (delta) => deltas.push(delta) });
    const frame = await session.server.frame('CPP_PIVOT_INIT');
    expect(frame.payload).toEqual({
      interruptedNodeId,
      activeThreadId: threadId,
      userPrompt: 'Rust instead.',
      newBranchNodeId: frame.payload.newBranchNodeId,
      receivedContentLength: 'Clojure is a Lisp'.length,
    });
    expect(isMessageId(frame.payload.newBranchNodeId)).toBe(true);
    expect(await first.result).toMatchObject({ status: 'interrupted', content: 'Clojure is a Lisp' });

    const branch = session.server.streaming(threadId);
    session.server.chunk(threadId, branch, 'Rust has ownership.');
    session.server.complete(threadId, branch);
    const result = await pivot;
    expect(result).toMatchObject({
      threadId,
      userNodeId: frame.payload.newBranchNodeId,
      assistantNodeId: branch,
      content: 'Rust has ownership.',
      status: 'completed',
    });
    expect(deltas).toEqual(['Rust has ownership.']);
    const graph = client.graph(threadId)!;
    expect(graph).toEqual(session.server.graph(threadId));
    expect(graph.nodes[interruptedNodeId]).toMatchObject({
      status: 'interrupted',
      childrenIds: [frame.payload.newBranchNodeId],
    });
    expect(graph.activeHeadMessageId).toBe(branch);
  });

  it('sends the receivedContentLength it is given, and the interrupted answer keeps what the server cut', async () => {
    const client = session.connect();
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'Shown, not yet shown');
    await mirrorUntil(client, threadId, () => contentOf(client, threadId, assistantNodeId) !== '');

    const pivot = client.pivot({ userPrompt: 'Stop there.', receivedContentLength: 6 });
    expect((await session.server.frame('CPP_PIVOT_INIT')).payload.receivedContentLength).toBe(6);
    expect(await result).toMatchObject({ status: 'interrupted', content: 'Shown,' });
    pivot.catch(() => undefined);
  });

  it('sends the expectedVersion it is given, as CPP_PIVOT_INIT carries it', async () => {
    const client = session.connect();
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    session.server.chunk(threadId, assistantNodeId, 'Partial');
    await mirrorUntil(client, threadId, () => contentOf(client, threadId, assistantNodeId) !== '');

    const pivot = client.pivot({ userPrompt: 'Stop there.', expectedVersion: 1 });
    expect((await session.server.frame('CPP_PIVOT_INIT')).payload.expectedVersion).toBe(1);
    pivot.catch(() => undefined);
    result.catch(() => undefined);
  });

  it('never shows the interrupted answer past the point where the user pivoted', async () => {
    const client = session.connect();
    const deltas: string[] = [];
    const { result, threadId, assistantNodeId } = await session.startPrompt(client, {
      onStream: (delta) => deltas.push(delta),
    });
    session.server.chunk(threadId, assistantNodeId, 'Seen');
    await mirrorUntil(client, threadId, () => contentOf(client, threadId, assistantNodeId) === 'Seen');

    const pivot = client.pivot({ userPrompt: 'Change of plan' });
    pivot.catch(() => undefined);
    // Already on the wire when the user pivoted: it arrives after the decision.
    session.server.chunk(threadId, assistantNodeId, ' unseen');

    expect((await session.server.frame('CPP_PIVOT_INIT')).payload.receivedContentLength).toBe(4);
    expect(await result).toMatchObject({ status: 'interrupted', content: 'Seen' });
    expect(deltas).toEqual(['Seen']);
  });

  it('branches from the head with a plain prompt when nothing streams', async () => {
    const client = session.connect();
    const first = await session.startPrompt(client);
    session.server.complete(first.threadId, first.assistantNodeId);
    await first.result;

    const pivot = client.pivot({ userPrompt: 'Next' });
    pivot.catch(() => undefined);
    const frame = await session.server.frame('CPP_PROMPT', 2);
    expect(frame.payload).toEqual({
      activeThreadId: first.threadId,
      userPrompt: 'Next',
      newNodeId: frame.payload.newNodeId,
    });
    expect(session.server.framesOf('CPP_PIVOT_INIT')).toEqual([]);
  });

  it('opens a new thread first when none is open, as in the spec Quick Start', async () => {
    const client = session.connect();
    const deltas: string[] = [];
    const pivot = client.pivot({
      userPrompt: 'Let us pivot to Rust implementation instead.',
      onStream: (delta) => deltas.push(delta),
    });
    const frame = await session.server.frame('CPP_PROMPT');
    const threadId = frame.payload.activeThreadId;
    expect(session.server.received.map((received) => received.type)).toEqual(['CPP_THREAD_OPEN', 'CPP_PROMPT']);
    const nodeId = session.server.streaming(threadId);
    session.server.chunk(threadId, nodeId, 'Rust it is.');
    session.server.complete(threadId, nodeId);

    expect((await pivot).content).toBe('Rust it is.');
    expect(deltas).toEqual(['Rust it is.']);
  });
});
