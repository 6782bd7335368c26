import type { GenerationResult, ServerObserver } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { completion, pivot } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread } from '../support/streaming-thread.js';

const fixture = useServer();

/** An application's observer that writes down what it is told, in order. */
function recorder(events: string[]): ServerObserver {
  return {
    connectionOpened: (connection) => events.push(`open ${connection.identity.did}`),
    frameReceived: (_connection, frame) => events.push(`in ${frame.type}`),
    storeOperation: ({ operation, failed }) => events.push(`store ${operation}${failed ? ' failed' : ''}`),
    pivotStarted: () => ({
      step: (name, work) => {
        events.push(`step ${name}`);
        return work();
      },
      halted: () => events.push('halted'),
      end: (error) => events.push(`pivot ended${error ? ' with an error' : ''}`),
    }),
    generationStarted: ({ nodeId }) => ({
      firstChunk: () => events.push(`first chunk ${nodeId}`),
      ended: ({ outcome }: GenerationResult) => events.push(`${outcome.kind} ${nodeId}`),
    }),
  };
}

describe('observers given to the server', () => {
  it('hear every frame, store operation, pivot step and model call, in order', async () => {
    const events: string[] = [];
    const setup = await startStreamingThread(fixture, ['Hello', ' world', '!'], 2, { observers: [recorder(events)] });
    const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Elsewhere');
    await completion(setup.client, setup.threadId, branch.assistantNodeId);

    const [first, second] = [setup.assistantNodeId, branch.assistantNodeId];
    // The new answer's first chunk may come before or after the pivot's end: they race.
    expect(events).toContain(`first chunk ${second}`);
    expect(events.filter((event) => !event.startsWith('store') && event !== `first chunk ${second}`)).toEqual([
      'open anonymous',
      'in CPP_THREAD_OPEN',
      'in CPP_PROMPT',
      `first chunk ${first}`,
      'in CPP_PIVOT_INIT',
      'step abort',
      `halted ${first}`,
      // CPP_STREAM_HALTED goes out as soon as the stream is cut, before the commit that keeps the cut.
      'halted',
      'step spawn',
      'step commit',
      'step insert',
      'pivot ended',
      `completed ${second}`,
    ]);
    expect(events).toEqual(expect.arrayContaining(['store createThread', 'store loadThread', 'store commit']));
  });
});
