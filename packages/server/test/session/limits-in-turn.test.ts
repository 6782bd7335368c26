import { ErrorCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { expectError } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();

describe('the size limits of a thread, checked in its turn', () => {
  it('answer a pipelined prompt to a full thread after the frames sent before it (PROTOCOL.md §15.1)', async () => {
    // One prompt fills the thread: its answer streams; a stop and a prompt follow at once, without waiting.
    const setup = await startStreamingThread(fixture, ['Hello', ' world'], 1, { limits: { maxNodesPerThread: 2 } });
    const mark = setup.client.mark();
    setup.client.send(
      'CPP_STREAM_STOP',
      { activeThreadId: setup.threadId, nodeId: setup.assistantNodeId },
      { id: 'stop' },
    );
    setup.client.send(
      'CPP_PROMPT',
      { activeThreadId: setup.threadId, userPrompt: 'More', newNodeId: 'msg_more' },
      { id: 'more' },
    );
    await expectError(setup.client, ErrorCode.RATE_LIMITED, { refId: 'more' });
    const answers = setup.client
      .since(mark)
      .map((frame) => (frame.type === 'CPP_ERROR' ? `${frame.type} ${frame.payload.code}` : frame.type));
    expect(answers).toEqual(['CPP_STREAM_HALTED', 'CPP_GRAPH_PATCH', 'CPP_ERROR RATE_LIMITED']);
  });
});
