import { once } from 'node:events';
import type { PostgresStore } from '@promethea/cpp-server/postgres';
import { expect, it, vi } from 'vitest';
import { eventually } from '../support/eventually.js';
import { describeWithPostgres } from '../support/postgres.js';
import { captureLogs } from '../observability/support/captured-logs.js';
import { chunksReceived, completion, openThread, prompt } from '../support/protocol-steps.js';
import { describeWithRedis } from '../support/redis.js';
import { TestClock, ThreadDriver } from '../store/thread-driver.js';
import { mirrorOf } from '../support/thread-mirror.js';
import { answerEnd } from './cluster-processes.js';
import { useProxiedInstances } from './proxied-instances.js';

// Real PostgreSQL and Redis connections, on a machine that also runs the rest of the suite.
vi.setConfig({ testTimeout: 60_000 });

const CHUNKS = ['Clojure ', 'is ', 'a ', 'Lisp ', 'on ', 'the ', 'JVM.'];

/**
 * The next load of the thread from `store` reads the database at once but is handed back only on `release`: a
 * reload overtaken by a commit.
 */
function holdNextLoad(store: PostgresStore): { read: Promise<void>; release(): void } {
  const load = store.loadThread.bind(store);
  let read!: () => void;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const held = { read: new Promise<void>((resolve) => (read = resolve)), release };
  store.loadThread = async (threadId) => {
    store.loadThread = load;
    const stored = await load(threadId);
    read();
    await released;
    return stored;
  };
  return held;
}

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
      const logs = captureLogs('info');
      const [writing, watching] = await instances.start(2, { chunks: CHUNKS }, { logger: logs.logger });
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
      const stored = await (await instances.direct()).loadThread(threadId);
      expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: CHUNKS.join('') });
      // The outage is told once by each instance that met it, and its end once: no line (and stack) per failure.
      const told = (msg: string) => logs.lines.filter((line) => line.msg === msg).length;
      expect(told('server error')).toBe(0);
      expect(told('store unreachable')).toBeGreaterThanOrEqual(1);
      expect(told('store unreachable')).toBeLessThanOrEqual(2);
      expect(told('store reachable again')).toBeGreaterThanOrEqual(1);
    });

    it('keeps the cut of an answer stopped while PostgreSQL was down once it is back, though the stop was refused', async () => {
      const [writing, watching] = await instances.start(2, { chunks: CHUNKS });
      const writer = await writing!.connect();
      const { threadId } = await openThread(writer, { patches: true });
      const watcher = await watching!.connect();
      await openThread(watcher, { threadId, patches: true });
      const { assistantNodeId } = await prompt(writer, threadId, 'What is Clojure?');
      (await writing!.model.call(0)).release(3);
      await chunksReceived(watcher, assistantNodeId, 3);

      await instances.postgres.cut();
      writer.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId });
      const halted = (await writer.next('CPP_STREAM_HALTED')).payload;
      expect((await writer.next('CPP_ERROR')).payload).toMatchObject({ code: 'INTERNAL' });
      await instances.postgres.restore();

      for (const client of [writer, watcher]) {
        const { update } = await answerEnd(client, threadId, assistantNodeId, 'interrupted');
        expect(update.nodes[assistantNodeId]!.content).toHaveLength(halted.finalContentLength);
      }
      const stored = await (await instances.direct()).loadThread(threadId);
      expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Clojure is a ' });
    });

    it("rides out a Redis outage shorter than the answer's lock lifetime: the answer completes", async () => {
      const [writing, watching] = await instances.start(
        2,
        { chunks: CHUNKS },
        { clusterTimings: { lockTtlMs: 20_000 } },
      );
      const writer = await writing!.connect();
      const { threadId } = await openThread(writer, { patches: true });
      const watcher = await watching!.connect();
      await openThread(watcher, { threadId, patches: true });
      const { assistantNodeId } = await prompt(writer, threadId, 'What is Clojure?');
      const call = await writing!.model.call(0);
      call.release(2);
      await chunksReceived(watcher, assistantNodeId, 2);

      await instances.redis.cut();
      call.release(2);
      // Its own clients go on receiving the answer: the instance writes to them directly.
      await chunksReceived(writer, assistantNodeId, 4);
      await instances.redis.restore();
      call.releaseAll();

      for (const client of [writer, watcher]) {
        // The watcher's instance missed chunks while Redis was away: it may show the end in a sync after a reload.
        const { update } = await answerEnd(client, threadId, assistantNodeId, 'completed');
        expect(update.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: CHUNKS.join('') });
        expect(client.all('CPP_STREAM_HALTED')).toEqual([]);
      }
    });

    it("stops an answer at its lock's deadline in a longer Redis outage, and the cluster recovers it once Redis is back", async () => {
      const logs = captureLogs('info');
      const timings = { clusterTimings: { lockTtlMs: 600, sweepIntervalMs: 100 }, logger: logs.logger };
      const [writing, watching] = await instances.start(2, { chunks: () => 'word ' }, timings);
      const writer = await writing!.connect();
      const { threadId } = await openThread(writer, { patches: true });
      const watcher = await watching!.connect();
      await openThread(watcher, { threadId, patches: true });
      const { assistantNodeId } = await prompt(writer, threadId, 'Talk forever');
      const call = await writing!.model.call(0);
      call.release(3);
      await chunksReceived(watcher, assistantNodeId, 3);

      await instances.redis.cut();
      // Past the lock's lifetime another instance may have taken the answer over: its writer stops.
      if (!call.signal.aborted) await once(call.signal, 'abort');
      await instances.redis.restore();

      for (const client of [writer, watcher]) {
        const { update } = await answerEnd(client, threadId, assistantNodeId, 'interrupted');
        expect(update.nodes[assistantNodeId]!.content).toMatch(/^(word )+$/);
      }
      const stored = await (await instances.direct()).loadThread(threadId);
      expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted' });
      expect(mirrorOf(watcher.frames, threadId)).toEqual({ graph: stored!.graph, problems: [] });
      const told = (msg: string) => logs.lines.filter((line) => line.msg === msg).length;
      expect(logs.lines.filter((line) => line.msg === 'server error').map((line) => line.err)).toEqual([]);
      // Once by each instance, each line in place of the many failures of its outage.
      expect(told('cluster unreachable')).toBeGreaterThanOrEqual(1);
      expect(told('cluster unreachable')).toBeLessThanOrEqual(2);
      expect(told('cluster reachable again')).toBeGreaterThanOrEqual(1);
    });

    it('never sends a client an older version when a reload that Redis coming back started is overtaken by a prompt', async () => {
      const [writing] = await instances.start(1, { chunks: CHUNKS });
      const writer = await writing!.connect();
      const { threadId } = await openThread(writer, { patches: true });
      const load = holdNextLoad(writing!.store);
      // Back from a cut, the instance reloads every thread it holds: messages published meanwhile are lost.
      await instances.redis.cut();
      await instances.redis.restore();
      await load.read;

      const { assistantNodeId } = await prompt(writer, threadId, 'What is Clojure?');
      const call = await writing!.model.call(0);
      call.release(2);
      await chunksReceived(writer, assistantNodeId, 2);
      load.release();
      call.releaseAll();

      await completion(writer, threadId, assistantNodeId);
      const versions = writer.frames.flatMap((frame) =>
        frame.type === 'CPP_GRAPH_PATCH' || frame.type === 'CPP_SYNC_GRAPH' ? [frame.payload.version] : [],
      );
      expect(versions).toEqual([...versions].sort((a, b) => a - b));
      const stored = await (await instances.direct()).loadThread(threadId);
      expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: CHUNKS.join('') });
    });

    it('recovers an answer the store shows streaming that no instance holds the lock of or has loaded', async () => {
      await instances.start(1, { chunks: CHUNKS }, { clusterTimings: { storeSweepIntervalMs: 200 } });
      // Its instance died after its lock's trace was lost (Redis restarted empty): nothing in Redis tells of it.
      const store = await instances.direct();
      const driver = await ThreadDriver.create(store, new TestClock());
      const { assistantNodeId } = await driver.prompt('What is Clojure?');
      await driver.stream(assistantNodeId, 'Clojure is');

      const recovered = await eventually(async () => {
        const node = (await store.loadThread(driver.threadId))!.graph.nodes[assistantNodeId]!;
        return node.status === 'streaming' ? undefined : node;
      }, 'the answer recovered');
      expect(recovered).toMatchObject({ status: 'interrupted', content: 'Clojure is' });
    });
  });
});
