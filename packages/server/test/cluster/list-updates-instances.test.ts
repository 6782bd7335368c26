import { describe, expect, it } from 'vitest';
import { listPage, openThread } from '../support/protocol-steps.js';
import { useLocalInstances } from './local-instances.js';

/** The thread list's updates across the servers of a cluster (PROTOCOL.md §7.11). */
describe('the thread list subscription on servers sharing a store through a LocalCluster', () => {
  const instances = useLocalInstances();

  it('tells a connection of one instance of a thread created, renamed and deleted through another', async () => {
    const [first, second] = await instances.start(2, { chunks: ['ok'] });
    const watcher = await first!.connect({ did: 'did:web:owner.example' });
    const actor = await second!.connect({ did: 'did:web:owner.example' });
    const stranger = await second!.connect({ did: 'did:web:stranger.example' });
    await listPage(watcher, { subscribe: true });

    await openThread(stranger);
    const { threadId } = await openThread(actor, { patches: true });
    const created = await watcher.next('CPP_THREAD_UPDATED');
    expect(created.payload.thread).toMatchObject({ threadId, version: 0, nodeCount: 0 });

    actor.send('CPP_THREAD_RENAME', { threadId, title: 'Across the cluster' });
    const renamed = await watcher.next('CPP_THREAD_UPDATED');
    expect(renamed.payload.thread).toMatchObject({ threadId, version: 1, title: 'Across the cluster' });

    actor.send('CPP_THREAD_DELETE', { threadId });
    expect((await watcher.next('CPP_THREAD_DELETED')).payload).toEqual({ threadId });
    // Nothing of the stranger's thread, nothing twice.
    expect(watcher.all('CPP_THREAD_UPDATED')).toHaveLength(2);
  });
});
