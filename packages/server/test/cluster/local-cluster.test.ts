import { LocalCluster } from '../../src/cluster/local-cluster.js';
import { describeClusterTransportContract } from './cluster-transport-contract.js';

describeClusterTransportContract('LocalClusterTransport', async () => {
  const cluster = new LocalCluster();
  return { join: async () => cluster.join(), cleanup: async () => {} };
});
