import type { ModelProvider, ModelStreamPart } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { completion, openThread, prompt, requestSync, streamedText } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** A model that reasons before, between and after the text of its answer. */
const reasoningModel: ModelProvider = {
  provider: 'scripted',
  model: 'reasoner',
  reasoning: true,
  async *stream(): AsyncGenerator<ModelStreamPart> {
    yield { type: 'reasoning-delta', text: 'The user greets me. ' };
    yield { type: 'text-delta', text: 'Hello' };
    yield { type: 'reasoning-delta', text: 'Add a question?' };
    yield { type: 'text-delta', text: ' there!' };
    yield { type: 'reasoning-delta', text: ' No.' };
    yield { type: 'finish', finishReason: 'length' };
  },
};

describe('a reasoning model', () => {
  it("answers with its answer's text alone: its reasoning is never sent or kept as answer text", async () => {
    await fixture.start({ model: reasoningModel });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Hi');
    const { completed } = await completion(client, threadId, assistantNodeId);
    expect(completed).toMatchObject({ finishReason: 'length', finalContentLength: 'Hello there!'.length });
    expect(streamedText(client, assistantNodeId)).toBe('Hello there!');
    expect((await requestSync(client, threadId)).nodes[assistantNodeId]).toMatchObject({ content: 'Hello there!', status: 'completed' });
  });
});
