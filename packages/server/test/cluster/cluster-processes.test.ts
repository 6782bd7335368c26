import { graphFromSync } from '@promethea/cpp-protocol';
import { expect, vi } from 'vitest';
import { eventually } from '../support/eventually.js';
import { describeWithPostgres } from '../support/postgres.js';
import {
  chunksOf,
  chunksReceived,
  expectError,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
  type GraphUpdate,
} from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { describeWithRedis } from '../support/redis.js';
import { mirrorOf } from '../support/thread-mirror.js';
import { answerEnd, it, type ClusterInstance } from './cluster-processes.js';

// Three processes per test, on a machine that also runs the rest of the suite.
vi.setConfig({ testTimeout: 90_000, hookTimeout: 60_000 });

describeWithPostgres('cpp-server processes in cluster mode (PostgreSQL and Redis)', () => {
  // Each test's cluster has a schema and a Redis prefix of its own, and its tests mostly wait (on the demo model,
  // on a lock's expiry after kill -9): run together (Vitest's maxConcurrency, five, at once) they take half the time.
  describeWithRedis('three instances behind one endpoint', { concurrent: true }, () => {
    /** A thread whose answer streams on `generating`, watched from each of `watching` (patch mode). */
    async function streamingThread(generating: ClusterInstance, watching: ClusterInstance[]) {
      const writer = await generating.connect();
      const { threadId } = await openThread(writer, { patches: true });
      const watchers: RawClient[] = [];
      for (const instance of watching) {
        const client = await instance.connect();
        await openThread(client, { threadId, patches: true });
        watchers.push(client);
      }
      const exchange = await prompt(writer, threadId, 'Tell me about Clojure');
      return { writer, watchers, threadId, exchange };
    }

    it('fans every frame of a thread out to its clients on all instances', async ({ cluster }) => {
      const instances = await cluster.start(3);
      const { writer, watchers, threadId, exchange } = await streamingThread(instances[0]!, instances.slice(1));

      await answerEnd(writer, threadId, exchange.assistantNodeId, 'completed');
      for (const client of watchers) await answerEnd(client, threadId, exchange.assistantNodeId, 'completed');

      const text = streamedText(writer, exchange.assistantNodeId);
      expect(text.length).toBeGreaterThan(100);
      const mirrors = [writer, ...watchers].map((client) => mirrorOf(client.frames, threadId));
      for (const [index, client] of watchers.entries()) {
        expect(streamedText(client, exchange.assistantNodeId)).toBe(text);
        expect(mirrors[index + 1]).toEqual(mirrors[0]);
      }
      expect(mirrors[0]!.problems).toEqual([]);
      expect(mirrors[0]!.graph!.nodes[exchange.assistantNodeId]).toMatchObject({ status: 'completed', content: text });
    });

    it('runs a pivot sent to one instance on the instance whose generation it halts', async ({ cluster }) => {
      const [pivoting, generating] = await cluster.start(3);
      const { writer, watchers, threadId, exchange } = await streamingThread(generating!, [pivoting!]);
      const client = watchers[0]!;
      await chunksReceived(client, exchange.assistantNodeId, 3);
      const shown = streamedText(client, exchange.assistantNodeId).length;

      const branch = await pivot(client, threadId, exchange.assistantNodeId, 'Rust instead', {
        receivedContentLength: shown,
      });

      const halted = client.all('CPP_STREAM_HALTED')[0]!.payload;
      expect(halted).toMatchObject({
        interruptedNodeId: exchange.assistantNodeId,
        finalContentLength: shown,
        reason: 'pivot',
      });
      expect((await writer.next('CPP_STREAM_HALTED')).payload).toEqual(halted);
      const interrupted = branch.update.nodes[exchange.assistantNodeId]!;
      expect(interrupted).toMatchObject({ status: 'interrupted', childrenIds: [branch.userNodeId] });
      expect(interrupted.content).toBe(streamedText(client, exchange.assistantNodeId).slice(0, shown));
      await answerEnd(client, threadId, branch.assistantNodeId, 'completed');
      await answerEnd(writer, threadId, branch.assistantNodeId, 'completed');
      expect(mirrorOf(client.frames, threadId)).toEqual(mirrorOf(writer.frames, threadId));
    });

    it('stops a generation of another instance, and refuses a prompt there while it streams', async ({ cluster }) => {
      const [stopping, generating] = await cluster.start(3);
      const { writer, watchers, threadId, exchange } = await streamingThread(generating!, [stopping!]);
      const client = watchers[0]!;
      await chunksReceived(client, exchange.assistantNodeId, 2);

      client.send(
        'CPP_PROMPT',
        { activeThreadId: threadId, userPrompt: 'Me too', newNodeId: 'msg_cluster_busy' },
        { id: 'busy' },
      );
      await expectError(client, 'THREAD_BUSY', { refId: 'busy' });
      client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });

      const halted = (await client.next('CPP_STREAM_HALTED')).payload;
      expect(halted).toMatchObject({ interruptedNodeId: exchange.assistantNodeId, reason: 'stop' });
      const update = await nextUpdate(
        writer,
        threadId,
        (candidate) => candidate.nodes[exchange.assistantNodeId]?.status === 'interrupted',
      );
      expect(update.nodes[exchange.assistantNodeId]!.content).toHaveLength(halted.finalContentLength);
      await nextUpdate(client, threadId, (candidate) => candidate.version === update.version);
      expect(mirrorOf(client.frames, threadId)).toEqual(mirrorOf(writer.frames, threadId));
    });

    it('resumes a stream on another instance, after a switch mid-stream, with nothing missing or doubled', async ({
      cluster,
    }) => {
      const [first, second] = await cluster.start(3);
      const { writer, threadId, exchange } = await streamingThread(first!, []);
      const leaving = await first!.connect();
      await openThread(leaving, { threadId, patches: true });
      await chunksReceived(leaving, exchange.assistantNodeId, 5);
      // What the leaving client saw: the text its sync carried when it joined, then its chunks.
      const leavingMirror = mirrorOf(leaving.frames, threadId);
      expect(leavingMirror.problems).toEqual([]);
      const seenBefore = leavingMirror.graph!.nodes[exchange.assistantNodeId]!.content;
      expect(seenBefore.endsWith(streamedText(leaving, exchange.assistantNodeId))).toBe(true);
      await leaving.close();

      const back = await second!.connect();
      const sync = await openThread(back, { threadId, patches: true });
      const { update } = await answerEnd(back, threadId, exchange.assistantNodeId, 'completed');

      const resumedFrom = sync.nodes[exchange.assistantNodeId]!.content;
      expect(resumedFrom.length).toBeGreaterThanOrEqual(seenBefore.length);
      expect(resumedFrom.startsWith(seenBefore)).toBe(true);
      const after = chunksOf(back, exchange.assistantNodeId);
      expect(after[0]?.offset ?? update.nodes[exchange.assistantNodeId]!.content.length).toBe(resumedFrom.length);
      const mirror = mirrorOf(back.frames, threadId);
      expect(mirror.problems).toEqual([]);
      const full = mirror.graph!.nodes[exchange.assistantNodeId]!.content;
      expect(full).toBe(resumedFrom + after.map((chunk) => chunk.delta).join(''));
      // The writer's own socket may still carry the last chunks when the other instance's client has seen the end.
      await answerEnd(writer, threadId, exchange.assistantNodeId, 'completed');
      expect(full).toBe(streamedText(writer, exchange.assistantNodeId));
    });

    it('lets two clients pivot one thread at once from two instances: one halts it, the other is refused or branches', async ({
      cluster,
    }) => {
      const [left, right, generating] = await cluster.start(3);
      const { watchers, threadId, exchange } = await streamingThread(generating!, [left!, right!]);
      for (const client of watchers) await chunksReceived(client, exchange.assistantNodeId, 2);

      const pivots = watchers.map((client, index) => {
        const newBranchNodeId = `msg_cluster_pivot_${index}`;
        client.send(
          'CPP_PIVOT_INIT',
          {
            interruptedNodeId: exchange.assistantNodeId,
            activeThreadId: threadId,
            userPrompt: `Pivot ${index}`,
            newBranchNodeId,
          },
          { id: `pivot-${index}` },
        );
        const branched = (frame: { payload: GraphUpdate }) => frame.payload.nodes[newBranchNodeId] !== undefined;
        return Promise.race([
          client.next('CPP_GRAPH_PATCH', branched).then(() => 'branched' as const),
          client
            .next('CPP_ERROR', (frame) => frame.payload.refId === `pivot-${index}`)
            .then((frame) => frame.payload.code),
        ]);
      });

      const outcomes = await Promise.all(pivots);
      expect(outcomes).toContain('branched');
      expect(outcomes.filter((outcome) => outcome !== 'branched')).toEqual(
        outcomes.includes('THREAD_BUSY') ? ['THREAD_BUSY'] : [],
      );
      // A refused pivot's error comes back from the owning instance by another path than the thread's frames, so the
      // HALTED that fan-out carries may still be on its way to that client.
      for (const client of watchers) {
        await eventually(
          () => (client.all('CPP_STREAM_HALTED').length > 0 ? true : undefined),
          'the halt reaches every watcher',
        );
        expect(client.all('CPP_STREAM_HALTED').map((frame) => frame.payload.reason)).toEqual(['pivot']);
      }
    });

    it('runs the tree and thread operations sent to any instance: regenerate, branch delete, rename, delete', async ({
      cluster,
    }) => {
      const [operating, generating, deleting] = await cluster.start(3);
      const { writer, watchers, threadId, exchange } = await streamingThread(generating!, [operating!]);
      const client = watchers[0]!;
      await chunksReceived(client, exchange.assistantNodeId, 2);
      const shown = streamedText(client, exchange.assistantNodeId).length;

      // Regenerate halts the answer streaming on the other process, at what this client showed.
      client.send('CPP_REGENERATE', {
        activeThreadId: threadId,
        userNodeId: exchange.userNodeId,
        newNodeId: 'msg_cluster_again',
        receivedContentLength: shown,
      });
      const halted = (await client.next('CPP_STREAM_HALTED')).payload;
      expect(halted).toMatchObject({
        interruptedNodeId: exchange.assistantNodeId,
        reason: 'regenerate',
        finalContentLength: shown,
      });
      expect((await writer.next('CPP_STREAM_HALTED')).payload).toEqual(halted);
      await answerEnd(client, threadId, 'msg_cluster_again', 'completed');
      await answerEnd(writer, threadId, 'msg_cluster_again', 'completed');

      // The interrupted first answer is deleted from a third process; both clients see the same tree.
      const third = await deleting!.connect();
      await openThread(third, { threadId, patches: true });
      third.send('CPP_BRANCH_DELETE', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });
      for (const watcher of [writer, client]) {
        const removal = await nextUpdate(watcher, threadId, (update) => 'removedNodeIds' in update);
        expect(removal).toMatchObject({
          activeHeadMessageId: 'msg_cluster_again',
          removedNodeIds: [exchange.assistantNodeId],
        });
      }
      const tree = mirrorOf(writer.frames, threadId);
      expect(tree.problems).toEqual([]);
      expect(tree.graph!.nodes[exchange.userNodeId]!.childrenIds).toEqual(['msg_cluster_again']);
      expect(mirrorOf(client.frames, threadId)).toEqual(tree);

      client.send('CPP_THREAD_RENAME', { threadId, title: 'Clojure, again' });
      await nextUpdate(writer, threadId, (update) => update.title === 'Clojure, again');

      writer.send('CPP_THREAD_DELETE', { threadId });
      for (const watcher of [writer, client, third])
        expect((await watcher.next('CPP_THREAD_DELETED')).payload).toEqual({ threadId });
      const late = await generating!.connect();
      late.send('CPP_SYNC_REQUEST', { threadId }, { id: 'gone' });
      await expectError(late, 'NOT_FOUND', { refId: 'gone' });
      // The cluster goes on (and the store keeps a thread for the invariant check after each test).
      const next = await openThread(late, { patches: true });
      await answerEnd(
        late,
        next.threadId,
        (await prompt(late, next.threadId, 'And now?')).assistantNodeId,
        'completed',
      );
    });

    it('continues from a client of another process an answer stopped on the first: both clients see it stream on from where it stopped', async ({
      cluster,
    }) => {
      const [generating, continuing] = await cluster.start(3);
      const { writer, watchers, threadId, exchange } = await streamingThread(generating!, [continuing!]);
      const client = watchers[0]!;
      const nodeId = exchange.assistantNodeId;
      await chunksReceived(client, nodeId, 2);
      writer.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId });
      const halted = (await writer.next('CPP_STREAM_HALTED')).payload;
      const stopped = await nextUpdate(client, threadId, (update) => update.nodes[nodeId]?.status === 'interrupted');
      await nextUpdate(writer, threadId, (update) => update.version === stopped.version);
      const kept = stopped.nodes[nodeId]!.content;
      expect(kept).toHaveLength(halted.finalContentLength);

      client.send('CPP_CONTINUE', { activeThreadId: threadId, nodeId, expectedVersion: stopped.version });
      for (const watcher of [writer, client]) {
        const resumed = await nextUpdate(watcher, threadId, (update) => update.version > stopped.version);
        expect(resumed.nodes[nodeId]).toMatchObject({ status: 'streaming', content: kept });
        const { update } = await answerEnd(watcher, threadId, nodeId, 'completed');
        // The chunks after the continue start at the kept text's end (chunksOf checks each follows the one before).
        const text = streamedText(watcher, nodeId);
        expect(text.startsWith(kept) && text.length > kept.length).toBe(true);
        expect(update.nodes[nodeId]!.content).toBe(text);
      }
      const tree = mirrorOf(writer.frames, threadId);
      expect(tree.problems).toEqual([]);
      expect(tree.graph!.nodes[nodeId]).toMatchObject({ status: 'completed', content: streamedText(writer, nodeId) });
      expect(mirrorOf(client.frames, threadId)).toEqual(tree);
    });

    // That it waits for the lock's expiry and not the reply timeout is checked without wall-clock margins in
    // local-cluster-instances.test.ts (a reply timeout of an hour); here, that it works between real processes.
    it('runs a pivot sent to the survivor just after the generating instance was killed, once its answer is recovered', async ({
      cluster,
    }) => {
      // Two instances: the survivor's own sweep is the only other way to recover, and it waits behind the pivot.
      const [generating, surviving] = await cluster.start(2);
      const { watchers, threadId, exchange } = await streamingThread(generating!, [surviving!]);
      const client = watchers[0]!;
      await chunksReceived(client, exchange.assistantNodeId, 3);

      expect(await generating!.kill('SIGKILL')).toBe('SIGKILL');
      const branch = await pivot(client, threadId, exchange.assistantNodeId, 'Rust instead');

      expect(client.all('CPP_STREAM_HALTED')[0]?.payload).toMatchObject({
        interruptedNodeId: exchange.assistantNodeId,
        reason: 'shutdown',
      });
      expect(branch.update.nodes[exchange.assistantNodeId]).toMatchObject({
        status: 'interrupted',
        childrenIds: [branch.userNodeId],
      });
      await answerEnd(client, threadId, branch.assistantNodeId, 'completed');
      expect(mirrorOf(client.frames, threadId).problems).toEqual([]);
    });

    // Without wall-clock margins, and with the resumed instance's chunk certain to come first, in
    // local-cluster-instances.test.ts; here, between real processes, one paused with SIGSTOP.
    it('sends nothing more of an answer whose instance was paused past its lock once the other recovered it', async ({
      cluster,
    }) => {
      const [generating, surviving] = await cluster.start(2);
      const { writer, watchers, threadId, exchange } = await streamingThread(generating!, [surviving!]);
      const watcher = watchers[0]!;
      const nodeId = exchange.assistantNodeId;
      await chunksReceived(watcher, nodeId, 3);

      process.kill(generating!.pid, 'SIGSTOP');
      let recovered: GraphUpdate;
      try {
        ({ update: recovered } = await answerEnd(watcher, threadId, nodeId, 'interrupted'));
      } finally {
        process.kill(generating!.pid, 'SIGCONT');
      }

      // The resumed instance hears of the recovery, then renames the thread: its patch goes out after anything it
      // sent on resuming, so the watcher has had all of that once it has the patch.
      await nextUpdate(writer, threadId, (update) => update.nodes[nodeId]?.status === 'interrupted');
      writer.send('CPP_THREAD_RENAME', { threadId, title: 'Clojure, paused' });
      await nextUpdate(watcher, threadId, (update) => update.version > recovered.version);
      const haltedAt = watcher.frames.findIndex((frame) => frame.type === 'CPP_STREAM_HALTED');
      const late = watcher.frames.slice(haltedAt).filter((frame) => frame.type === 'CPP_STREAM_CHUNK');
      expect(late).toEqual([]);
      expect((await requestSync(watcher, threadId)).nodes[nodeId]).toEqual(recovered.nodes[nodeId]);
      expect((await requestSync(writer, threadId)).nodes[nodeId]).toEqual(recovered.nodes[nodeId]);
    });

    // That it takes at most 5 s with the default timings is checked on a fake clock in local-cluster-instances.test.ts;
    // here, that it works between real processes.
    it('marks the node of a generating instance killed with SIGKILL interrupted, and tells every client', async ({
      cluster,
    }) => {
      const [generating, ...others] = await cluster.start(3);
      const { watchers, threadId, exchange } = await streamingThread(generating!, others);
      for (const client of watchers) await chunksReceived(client, exchange.assistantNodeId, 5);

      expect(await generating!.kill('SIGKILL')).toBe('SIGKILL');

      for (const client of watchers) {
        const { update, announced } = await answerEnd(client, threadId, exchange.assistantNodeId, 'interrupted');
        if (announced) {
          expect(announced.payload).toMatchObject({ reason: 'shutdown' });
          // The answer keeps no text the client was not shown before the halt: what its chunks brought, and any
          // sync of a copy that reloaded mid-stream (a client whose copy reloaded at the end gets the end as a sync).
          const end = client.frames.findIndex((frame) => 'payload' in frame && frame.payload === update);
          const shown = mirrorOf(client.frames.slice(0, end), threadId).graph!.nodes[exchange.assistantNodeId]!.content;
          expect(shown.startsWith(update.nodes[exchange.assistantNodeId]!.content)).toBe(true);
        }
        expect(mirrorOf(client.frames, threadId).problems).toEqual([]);
      }
      const [one, two] = watchers.map((client) => mirrorOf(client.frames, threadId).graph);
      expect(one).toEqual(two);
      const reopened = await others[0]!.connect();
      expect(graphFromSync(await openThread(reopened, { threadId }))).toEqual(one);
    });
  });
});
