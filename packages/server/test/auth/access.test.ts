import { newMessageId } from '@promethea/cpp-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  chunksReceived,
  expectError,
  listThreads,
  openThread,
  prompt,
  type Exchange,
} from '../support/protocol-steps.js';
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
    ['CPP_THREAD_CLOSE', () => ({ threadId })],
    ['CPP_SYNC_REQUEST', () => ({ threadId })],
    [
      'CPP_PROMPT',
      () => ({
        activeThreadId: threadId,
        userPrompt: 'Mine now.',
        newNodeId: newMessageId(),
        parentNodeId: exchange.userNodeId,
      }),
    ],
    [
      'CPP_PIVOT_INIT',
      () => ({
        activeThreadId: threadId,
        interruptedNodeId: exchange.assistantNodeId,
        userPrompt: 'Stop that.',
        newBranchNodeId: newMessageId(),
      }),
    ],
    ['CPP_STREAM_STOP', () => ({ activeThreadId: threadId, nodeId: exchange.assistantNodeId })],
    ['CPP_ANCHOR_HEAD', () => ({ activeThreadId: threadId, targetNodeId: exchange.userNodeId })],
    [
      'CPP_REGENERATE',
      () => ({ activeThreadId: threadId, userNodeId: exchange.userNodeId, newNodeId: newMessageId() }),
    ],
    ['CPP_CONTINUE', () => ({ activeThreadId: threadId, nodeId: exchange.assistantNodeId })],
    ['CPP_BRANCH_DELETE', () => ({ activeThreadId: threadId, nodeId: exchange.userNodeId })],
    ['CPP_THREAD_RENAME', () => ({ threadId, title: 'Mine now' })],
  ];

  /** The frame again, naming a thread that does not exist instead. */
  const unknownThread = (payload: Record<string, unknown>, missing: string) =>
    Object.fromEntries(Object.entries(payload).map(([key, value]) => [key, value === threadId ? missing : value]));

  /** Nothing of the thread reached the other DID, and the owner's stream went on untouched. */
  async function untouched(): Promise<void> {
    await owner.next('CPP_STREAM_COMPLETED', (frame) => frame.payload.nodeId === exchange.assistantNodeId);
    await listThreads(other);
    expect(other.frames.filter((frame) => 'threadId' in frame.payload || 'interruptedNodeId' in frame.payload)).toEqual(
      [],
    );
    expect(owner.all('CPP_STREAM_HALTED')).toEqual([]);
  }

  it.each(frames)(
    'is, to %s, a thread that does not exist: the same NOT_FOUND word for word, and nothing changed or subscribed',
    async (type, payload) => {
      other.send(type, payload(), { id: 'intrusion' });
      const refused = await expectError(other, 'NOT_FOUND', { refId: 'intrusion', refType: type });
      const missing = `thread_${threadId.slice('thread_'.length).split('').reverse().join('')}`;
      other.send(type, unknownThread(payload(), missing), { id: 'intrusion' });
      const unknown = await expectError(other, 'NOT_FOUND', { refId: 'intrusion', refType: type });
      expect(refused.message).toBe(unknown.message.replace(missing, threadId));
      await untouched();
    },
  );

  it("is, to CPP_THREAD_DELETE, deleted as a thread that does not exist is, and stays its owner's", async () => {
    other.send('CPP_THREAD_DELETE', { threadId }, { id: 'intrusion' });
    expect((await other.next('CPP_THREAD_DELETED')).payload).toEqual({ threadId });
    await owner.next('CPP_STREAM_COMPLETED', (frame) => frame.payload.nodeId === exchange.assistantNodeId);
    expect(owner.all('CPP_THREAD_DELETED')).toEqual([]);
    expect((await listThreads(owner)).map((thread) => thread.threadId)).toEqual([threadId]);
  });

  it('is FORBIDDEN to CPP_THREAD_OPEN, which can neither open nor create it, and subscribes nothing', async () => {
    other.send('CPP_THREAD_OPEN', { threadId }, { id: 'intrusion' });
    await expectError(other, 'FORBIDDEN', { refId: 'intrusion', refType: 'CPP_THREAD_OPEN' });
    await untouched();
  });

  it('gives its node ids away nowhere: a new node id of its, reused, is the CONFLICT of any reused id', async () => {
    const own = (await openThread(other)).threadId;
    const mine = await prompt(other, own, 'mine');
    other.send(
      'CPP_PROMPT',
      { activeThreadId: own, userPrompt: 'again', newNodeId: mine.userNodeId, parentNodeId: mine.assistantNodeId },
      { id: 'reused-here' },
    );
    const here = await expectError(other, 'CONFLICT', { refId: 'reused-here' });
    other.send(
      'CPP_PROMPT',
      { activeThreadId: own, userPrompt: 'again', newNodeId: exchange.userNodeId, parentNodeId: mine.assistantNodeId },
      { id: 'reused-there' },
    );
    const there = await expectError(other, 'CONFLICT', { refId: 'reused-there' });
    expect(there.message).toBe(here.message.replace(mine.userNodeId, exchange.userNodeId));
    other.send('CPP_ANCHOR_HEAD', { activeThreadId: own, targetNodeId: exchange.userNodeId }, { id: 'their-node' });
    const theirs = await expectError(other, 'NOT_FOUND', { refId: 'their-node' });
    other.send('CPP_ANCHOR_HEAD', { activeThreadId: own, targetNodeId: 'msg_nobody' }, { id: 'no-node' });
    expect(theirs.message).toBe(
      (await expectError(other, 'NOT_FOUND', { refId: 'no-node' })).message.replace('msg_nobody', exchange.userNodeId),
    );
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
});
