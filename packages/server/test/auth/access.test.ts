import { newMessageId } from '@promethea/cpp-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { chunksReceived, expectError, listThreads, openThread, prompt, type Exchange } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';

const fixture = useServer();
const alice = TestIdentity.generate();
const bob = TestIdentity.generate();

let owner: RawClient;
let other: RawClient;
let threadId: string;
let exchange: Exchange;

beforeEach(async () => {
  await fixture.start({ auth: 'did-key' });
  owner = await connectAs(fixture, alice);
  other = await connectAs(fixture, bob);
  threadId = (await openThread(owner)).threadId;
  exchange = await prompt(owner, threadId, 'Explain spiking neural networks.');
  await chunksReceived(owner, exchange.assistantNodeId, 1);
});

describe("another DID's thread", () => {
  const frames: [type: string, payload: () => Record<string, unknown>][] = [
    ['CPP_THREAD_OPEN', () => ({ threadId })],
    ['CPP_THREAD_CLOSE', () => ({ threadId })],
    ['CPP_SYNC_REQUEST', () => ({ threadId })],
    ['CPP_PROMPT', () => ({ activeThreadId: threadId, userPrompt: 'Mine now.', newNodeId: newMessageId(), parentNodeId: exchange.userNodeId })],
    ['CPP_PIVOT_INIT', () => ({ activeThreadId: threadId, interruptedNodeId: exchange.assistantNodeId, userPrompt: 'Stop that.', newBranchNodeId: newMessageId() })],
    ['CPP_STREAM_STOP', () => ({ activeThreadId: threadId, nodeId: exchange.assistantNodeId })],
    ['CPP_ANCHOR_HEAD', () => ({ activeThreadId: threadId, targetNodeId: exchange.userNodeId })],
    ['CPP_THREAD_RENAME', () => ({ threadId, title: 'Mine now' })],
    ['CPP_THREAD_DELETE', () => ({ threadId })],
  ];

  it.each(frames)('is FORBIDDEN to %s, which changes and subscribes nothing', async (type, payload) => {
    other.send(type, payload(), { id: 'intrusion' });
    await expectError(other, 'FORBIDDEN', { refId: 'intrusion', refType: type });
    // The owner's stream goes on untouched, and none of it reaches the other DID.
    await owner.next('CPP_STREAM_COMPLETED', (frame) => frame.payload.nodeId === exchange.assistantNodeId);
    await listThreads(other);
    expect(other.frames.filter((frame) => 'threadId' in frame.payload || 'interruptedNodeId' in frame.payload)).toEqual([]);
    expect(owner.all('CPP_STREAM_HALTED')).toEqual([]);
  });

  it('is never found by its search', async () => {
    other.send('CPP_THREAD_SEARCH', { query: 'spiking' });
    expect((await other.next('CPP_SEARCH_RESULTS')).payload.hits).toEqual([]);
    owner.send('CPP_THREAD_SEARCH', { query: 'spiking' });
    expect((await owner.next('CPP_SEARCH_RESULTS')).payload.hits.map((hit) => hit.threadId)).toContain(threadId);
  });

  it('is not in its CPP_THREADS', async () => {
    const own = (await openThread(other)).threadId;
    expect((await listThreads(other)).map((thread) => thread.threadId)).toEqual([own]);
    expect((await listThreads(owner)).map((thread) => thread.threadId)).toEqual([threadId]);
  });

  it('is still open to its owner on another connection', async () => {
    const again = await connectAs(fixture, alice);
    expect((await openThread(again, { threadId })).nodes[exchange.userNodeId]).toBeDefined();
  });

  it('is told apart from a thread that does not exist, which is NOT_FOUND', async () => {
    other.send('CPP_SYNC_REQUEST', { threadId: 'thread_nobody' }, { id: 'missing' });
    await expectError(other, 'NOT_FOUND', { refId: 'missing' });
  });
});
