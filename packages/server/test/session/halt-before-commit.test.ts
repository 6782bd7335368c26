import { describe, expect, it } from 'vitest';
import { nextUpdate, openThread, requestSync } from '../support/protocol-steps.js';
import { startStreamingThread } from '../support/streaming-thread.js';
import { HeldStore } from '../support/held-store.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

describe('CPP_STREAM_HALTED', () => {
  it.each(['CPP_PIVOT_INIT', 'CPP_STREAM_STOP'] as const)(
    'confirms the cut of %s as soon as the stream stops, before the commit that keeps it',
    async (type) => {
      const store = new HeldStore();
      const setup = await startStreamingThread(fixture, ['Hello', ' wor', 'ld'], 2, { store });
      const { client, threadId, assistantNodeId } = setup;
      // Frames are applied in receipt order, so a round trip that waits for nothing of this thread is another thread's.
      const { threadId: otherThreadId } = await openThread(client);
      store.hold();
      const mark = client.mark();
      if (type === 'CPP_PIVOT_INIT') {
        client.send(type, {
          activeThreadId: threadId,
          interruptedNodeId: assistantNodeId,
          userPrompt: 'Else',
          newBranchNodeId: 'msg_branch',
          receivedContentLength: 7,
        });
      } else client.send(type, { activeThreadId: threadId, nodeId: assistantNodeId, receivedContentLength: 7 });
      const halted = (await client.next('CPP_STREAM_HALTED')).payload;
      expect(halted).toMatchObject({
        interruptedNodeId: assistantNodeId,
        finalContentLength: 7,
        lastChunkReceived: ' w',
      });
      expect(setup.call.signal.aborted).toBe(true);
      // A round trip on the connection: the commit still waits, so no structural update has come.
      await requestSync(client, otherThreadId);
      expect(client.since(mark).filter((frame) => frame.type === 'CPP_GRAPH_PATCH')).toEqual([]);
      store.release();
      const update = await nextUpdate(
        client,
        threadId,
        (candidate) => candidate.nodes[assistantNodeId]?.status === 'interrupted',
      );
      expect(update.nodes[assistantNodeId]).toMatchObject({ content: 'Hello w' });
      const types = client.since(mark).map((frame) => frame.type);
      expect(types.indexOf('CPP_STREAM_HALTED')).toBeLessThan(types.indexOf('CPP_GRAPH_PATCH'));
    },
  );
});
