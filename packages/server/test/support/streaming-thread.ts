import type { CPPServerOptions } from '@promethea/cpp-server';
import { chunksReceived, openThread, prompt } from './protocol-steps.js';
import type { RawClient } from './raw-client.js';
import { ScriptedModel, type ModelCall } from './scripted-model.js';
import type { ServerFixture } from './start-server.js';

export interface StreamingThread {
  model: ScriptedModel;
  client: RawClient;
  threadId: string;
  userNodeId: string;
  assistantNodeId: string;
  /** The model call writing the first answer: release it to stream more, or let it run to the end. */
  call: ModelCall;
}

/**
 * A server whose first answer has streamed `sent` of its `chunks` to a patch-mode client and waits for more;
 * every later answer (after a pivot, say) is "New answer", streamed freely.
 */
export async function startStreamingThread(
  fixture: ServerFixture,
  chunks: readonly string[],
  sent: number,
  options: CPPServerOptions = {},
): Promise<StreamingThread> {
  const model = new ScriptedModel((callIndex) =>
    callIndex === 0 ? { chunks } : { chunks: ['New ', 'answer'], gated: false },
  );
  await fixture.start({ model, ...options });
  const client = await fixture.connect();
  const { threadId } = await openThread(client, { patches: true });
  const { userNodeId, assistantNodeId } = await prompt(client, threadId, 'Tell me about Clojure');
  const call = await model.call(0);
  call.release(sent);
  await chunksReceived(client, assistantNodeId, sent);
  return { model, client, threadId, userNodeId, assistantNodeId, call };
}
