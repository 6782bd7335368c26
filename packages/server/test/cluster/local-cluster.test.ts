import { describe, expect, it } from 'vitest';
import { LocalCluster, LocalClusterTransport } from '../../src/cluster/local-cluster.js';
import { describeClusterTransportContract } from './cluster-transport-contract.js';

describeClusterTransportContract('LocalClusterTransport', async () => {
  const cluster = new LocalCluster();
  return { join: async () => cluster.join(), cleanup: async () => {} };
});

describe('a solitary LocalClusterTransport (a server without a cluster)', () => {
  it('keeps no copy of streamed text: no other node will read it', async () => {
    const alone = new LocalClusterTransport();
    alone.appendText('msg_a', 'Hello');
    alone.appendText('msg_a', ' world');
    expect(await alone.readText('msg_a')).toBe('');
    const member = new LocalCluster().join();
    member.appendText('msg_a', 'Hello');
    expect(await member.readText('msg_a')).toBe('Hello');
  });
});
