import type { TreeChange } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import type { ClusterTransport } from '../../src/cluster/cluster-transport.js';
import { LocalCluster } from '../../src/cluster/local-cluster.js';
import { ThreadReplica } from '../../src/cluster/thread-replica.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { describeClusterTransportContract } from './cluster-transport-contract.js';

describeClusterTransportContract('LocalClusterTransport', async () => {
  const cluster = new LocalCluster();
  return { join: async () => cluster.join(), cleanup: async () => {} };
});

/** What a replica asked its transport to tell the other instances. */
async function toldOthers(transport: ClusterTransport): Promise<string[]> {
  const told: string[] = [];
  const spy: ClusterTransport = Object.create(transport);
  spy.publish = (_threadId, message) => {
    // Who has the thread open (PROTOCOL.md §29.9) is told too: this test follows the thread's frames.
    if ('frame' in message) told.push(`publish ${message.frame}`);
  };
  spy.streamChunk = async (_threadId, _token, { nodeId, part, delta }, message) => {
    told.push(`stream ${nodeId} ${part} ${delta} ${message.frame}`);
    return true;
  };
  spy.endText = (nodeId) => told.push(`end ${nodeId}`);
  const store = new MemoryStore();
  await store.createThread({ threadId: 'thr_a', ownerDid: 'did:key:z6Mk', title: '', createdAt: 0, updatedAt: 0 });
  const context = {
    transport: spy,
    store,
    lockTtlMs: 1000,
    replyTimeoutMs: 1000,
    onError: () => undefined,
    onClose: () => undefined,
  };
  const { replica } = await ThreadReplica.open('thr_a', context);
  expect(await replica.claimGeneration()).toBe(true);
  const answer = {
    id: 'msg_b',
    parentId: 'msg_a',
    childrenIds: [],
    role: 'assistant' as const,
    content: 'Hi',
    status: 'completed' as const,
    createdAt: 0,
  };
  const change: TreeChange = {
    threadId: 'thr_a',
    baseVersion: 1,
    version: 2,
    rootNodeId: 'msg_a',
    activeHeadMessageId: 'msg_b',
    nodes: [answer],
  };
  replica.chunk({ threadId: 'thr_a', nodeId: 'msg_b', offset: 0, delta: 'Hi' }, 'chunk frame');
  replica.frame('halted frame');
  replica.change(change, 'patch frame', undefined);
  await replica.close();
  return told;
}

describe("a thread's link to the other instances", () => {
  it('tells a cluster every chunk, frame and change', async () => {
    expect(await toldOthers(new LocalCluster().join())).toEqual([
      'stream msg_b content Hi chunk frame',
      'publish halted frame',
      'publish patch frame',
      'end msg_b',
    ]);
  });
});
