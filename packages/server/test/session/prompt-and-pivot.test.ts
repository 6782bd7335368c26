import { findInvariantViolations, graphFromSync, newMessageId } from '@promethea/cpp-protocol';
import type { CPPServer } from '@promethea/cpp-server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';

let server: CPPServer;
let client: RawClient;

beforeEach(async () => {
  server = await startServer();
  client = await RawClient.connect(server.url, { did: 'did:key:z6MkTester' });
});

afterEach(async () => {
  await client.close();
  await server.close();
  expect(client.invalid).toEqual([]);
});

async function openThread(patches = true): Promise<string> {
  client.send('CPP_THREAD_OPEN', { patches });
  const sync = await client.next('CPP_SYNC_GRAPH');
  return sync.payload.threadId;
}

describe('prompt', () => {
  it('streams an answer under a new user node and completes it', async () => {
    const threadId = await openThread();
    const userNodeId = newMessageId();
    client.send('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'Explain spiking neural networks.',
      newNodeId: userNodeId,
    });

    const created = await client.next('CPP_GRAPH_PATCH');
    expect(created.payload.version).toBe(1);
    const user = created.payload.nodes[userNodeId]!;
    expect(user).toMatchObject({
      role: 'user',
      status: 'completed',
      parentId: null,
      content: 'Explain spiking neural networks.',
    });
    const assistantId = user.childrenIds[0]!;
    expect(created.payload.nodes[assistantId]).toMatchObject({
      role: 'assistant',
      status: 'streaming',
      content: '',
      parentId: userNodeId,
    });
    expect(created.payload.activeHeadMessageId).toBe(assistantId);

    const completed = await client.next('CPP_STREAM_COMPLETED');
    const chunks = client.all('CPP_STREAM_CHUNK');
    const text = chunks.map((chunk) => chunk.payload.delta).join('');
    chunks.reduce((offset, chunk) => {
      expect(chunk.payload.offset).toBe(offset);
      return offset + chunk.payload.delta.length;
    }, 0);
    expect(completed.payload).toMatchObject({
      threadId,
      nodeId: assistantId,
      finalContentLength: text.length,
      finishReason: 'stop',
    });

    const finished = await client.next('CPP_GRAPH_PATCH');
    expect(finished.payload.version).toBe(2);
    expect(finished.payload.nodes[assistantId]).toMatchObject({
      status: 'completed',
      content: text,
      model: 'cpp-demo',
    });

    client.send('CPP_SYNC_REQUEST', { threadId });
    const sync = await client.next('CPP_SYNC_GRAPH');
    const graph = graphFromSync(sync.payload);
    expect(findInvariantViolations(graph)).toEqual([]);
    expect(graph.nodes[assistantId]?.content).toBe(text);
    expect(sync.payload.title).toBe('Explain spiking neural networks.');
  });
});

describe('pivot', () => {
  it('halts the stream, keeps exactly what was sent, and branches under the interrupted node', async () => {
    const threadId = await openThread();
    client.send('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'Tell me about Clojure.',
      newNodeId: newMessageId(),
    });
    const created = await client.next('CPP_GRAPH_PATCH');
    const assistantId = created.payload.activeHeadMessageId!;
    await client.next('CPP_STREAM_CHUNK', (chunk) => chunk.payload.offset > 20);

    const branchId = newMessageId();
    client.send('CPP_PIVOT_INIT', {
      interruptedNodeId: assistantId,
      activeThreadId: threadId,
      userPrompt: 'Rust instead.',
      newBranchNodeId: branchId,
    });
    const halted = await client.next('CPP_STREAM_HALTED');
    const sent = client.all('CPP_STREAM_CHUNK').filter((chunk) => chunk.payload.nodeId === assistantId);
    const sentText = sent.map((chunk) => chunk.payload.delta).join('');
    expect(client.frames.indexOf(halted)).toBeGreaterThan(client.frames.indexOf(sent.at(-1)!));
    expect(halted.payload).toEqual({
      interruptedNodeId: assistantId,
      finalContentLength: sentText.length,
      lastChunkReceived: sent.at(-1)!.payload.delta,
      threadId,
      reason: 'pivot',
    });

    const splice = await client.next('CPP_GRAPH_PATCH');
    const interrupted = splice.payload.nodes[assistantId]!;
    expect(interrupted).toMatchObject({ status: 'interrupted', content: sentText });
    expect(interrupted.childrenIds).toEqual([branchId]);
    const branch = splice.payload.nodes[branchId]!;
    expect(branch).toMatchObject({ role: 'user', parentId: assistantId, content: 'Rust instead.' });
    const newAssistantId = branch.childrenIds[0]!;
    expect(splice.payload.activeHeadMessageId).toBe(newAssistantId);
    await client.next('CPP_STREAM_COMPLETED', (frame) => frame.payload.nodeId === newAssistantId);
    expect(client.all('CPP_STREAM_CHUNK').filter((chunk) => chunk.payload.nodeId === assistantId)).toHaveLength(
      sent.length,
    );
  });

  it('cuts at receivedContentLength when the client had shown less', async () => {
    const threadId = await openThread();
    client.send('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'Long answer please',
      newNodeId: newMessageId(),
    });
    const assistantId = (await client.next('CPP_GRAPH_PATCH')).payload.activeHeadMessageId!;
    await client.next('CPP_STREAM_CHUNK', (chunk) => chunk.payload.offset > 40);
    client.send('CPP_PIVOT_INIT', {
      interruptedNodeId: assistantId,
      activeThreadId: threadId,
      userPrompt: 'Shorter.',
      newBranchNodeId: newMessageId(),
      receivedContentLength: 17,
    });
    const halted = await client.next('CPP_STREAM_HALTED');
    const sentText = client
      .all('CPP_STREAM_CHUNK')
      .filter((chunk) => chunk.payload.nodeId === assistantId)
      .map((chunk) => chunk.payload.delta)
      .join('');
    expect(halted.payload.finalContentLength).toBe(17);
    const splice = await client.next('CPP_GRAPH_PATCH');
    expect(splice.payload.nodes[assistantId]?.content).toBe(sentText.slice(0, 17));
    expect(sentText.slice(0, 17).endsWith(halted.payload.lastChunkReceived)).toBe(true);
  });
});
