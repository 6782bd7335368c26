import { ErrorCode } from '@promethea/cpp-protocol';
import { ProviderError } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { completion, nextUpdate, openThread, prompt } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel, type ScriptedAnswer } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** The first answer is `failing`; every later one succeeds. */
async function start(
  failing: ScriptedAnswer,
): Promise<{ model: ScriptedModel; author: RawClient; watcher: RawClient; threadId: string }> {
  const model = new ScriptedModel((callIndex) => (callIndex === 0 ? failing : { chunks: ['Recovered'] }), {
    gated: false,
  });
  await fixture.start({ model });
  const [author, watcher] = [await fixture.connect(), await fixture.connect()];
  const { threadId } = await openThread(author, { patches: true });
  await openThread(watcher, { threadId });
  return { model, author, watcher, threadId };
}

async function expectFailureSeenBy(
  client: RawClient,
  threadId: string,
  nodeId: string,
  message: string,
  content: string,
): Promise<void> {
  const error = await client.next('CPP_ERROR');
  expect(error.payload).toEqual({ code: ErrorCode.PROVIDER_ERROR, message, threadId, nodeId });
  const update = await nextUpdate(client, threadId, (candidate) => candidate.nodes[nodeId]?.status !== 'streaming');
  expect(update.nodes[nodeId]).toMatchObject({ status: 'failed', content });
  expect(client.frames.indexOf(error)).toBeLessThan(
    client.frames.findIndex((frame) => 'payload' in frame && frame.payload === update),
  );
  expect(client.all('CPP_STREAM_COMPLETED')).toEqual([]);
}

describe('a model provider that fails mid-answer', () => {
  it('leaves the node failed with its partial text, tells every subscriber, and the thread goes on with that text in context', async () => {
    const message = 'OpenAI-compatible server answered HTTP 500: overloaded';
    const { model, author, watcher, threadId } = await start({
      chunks: ['partial ', 'text'],
      ending: new ProviderError(message, { status: 500 }),
    });
    const failed = await prompt(author, threadId, 'Try this');
    await expectFailureSeenBy(author, threadId, failed.assistantNodeId, message, 'partial text');
    await expectFailureSeenBy(watcher, threadId, failed.assistantNodeId, message, 'partial text');

    const next = await prompt(author, threadId, 'Again');
    expect(next.update.nodes[next.userNodeId]?.parentId).toBe(failed.assistantNodeId);
    await completion(author, threadId, next.assistantNodeId);
    expect(model.calls[1]?.messages.map((turn) => turn.content)).toEqual(['Try this', 'partial text', 'Again']);
  });

  it('reports an unexpected error without its message, which may hold secrets', async () => {
    const { author, threadId } = await start({
      chunks: [],
      ending: new Error('request to https://user:sk-secret@example.com failed'),
    });
    const failed = await prompt(author, threadId, 'Try this');
    await expectFailureSeenBy(author, threadId, failed.assistantNodeId, 'the model provider failed', '');
    expect(JSON.stringify(author.frames)).not.toContain('sk-secret');
  });
});
