import type { PostgresStore } from '@promethea/cpp-server/postgres';
import { expect, it, vi } from 'vitest';
import { describeWithPostgres } from '../support/postgres.js';
import { chunksReceived, completion, openThread, prompt } from '../support/protocol-steps.js';
import { describeWithRedis } from '../support/redis.js';
import { useProxiedInstances } from './proxied-instances.js';

// Real PostgreSQL and Redis connections, on a machine that also runs the rest of the suite.
vi.setConfig({ testTimeout: 60_000 });

const CHUNKS = ['Clojure ', 'is ', 'a ', 'Lisp ', 'on ', 'the ', 'JVM.'];

/** Settles once a commit of `store` has failed. */
function commitFailure(store: PostgresStore): Promise<unknown> {
  const commit = store.commit.bind(store);
  return new Promise((failed) => {
    store.commit = async (...args) => {
      try {
        return await commit(...args);
      } catch (error) {
        failed(error);
        throw error;
      }
    };
  });
}

describeWithPostgres('a cluster while its PostgreSQL or Redis is away (docs/cluster.md)', () => {
  describeWithRedis('instances behind proxies the tests cut', () => {
    const instances = useProxiedInstances();

    it('commits the end of an answer that ended while PostgreSQL was down once it is back, and tells every client', async () => {
      const [writing, watching] = await instances.start(2, { chunks: CHUNKS });
      const writer = await writing!.connect();
      const { threadId } = await openThread(writer, { patches: true });
      const watcher = await watching!.connect();
      await openThread(watcher, { threadId, patches: true });
      const { assistantNodeId } = await prompt(writer, threadId, 'What is Clojure?');
      const call = await writing!.model.call(0);
      call.release(2);
      await chunksReceived(watcher, assistantNodeId, 2);

      await instances.postgres.cut();
      const failed = commitFailure(writing!.store);
      call.releaseAll();
      await failed;
      await instances.postgres.restore();

      for (const client of [writer, watcher]) {
        const { completed, update } = await completion(client, threadId, assistantNodeId);
        expect(completed.finalContentLength).toBe(CHUNKS.join('').length);
        expect(update.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: CHUNKS.join('') });
      }
      const stored = await instances.stored(threadId);
      expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: CHUNKS.join('') });
    });
  });
});
