import { createModelProvider, type ModelProvider } from '@promethea/cpp-server';
import { onTestFinished } from 'vitest';
import { sse, startReplayServer, type ReplayServer } from '../../../../packages/server/test/model/replay-server.js';

/** A chat-completions stream as OpenAI sends it: one event per delta, the finish, then `[DONE]`. */
function chatCompletionStream(deltas: readonly string[]): string {
  const event = (choice: object) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', model: 'gpt-replay', choices: [{ index: 0, ...choice }] })}\n\n`;
  return [
    ...deltas.map((content) => event({ delta: { content }, finish_reason: null })),
    event({ delta: {}, finish_reason: 'stop' }),
    'data: [DONE]\n\n',
  ].join('');
}

/**
 * A local OpenAI-compatible server that answers each request with the next of `answers` (each a list of deltas),
 * and the real provider that talks to it: the path a real model's text takes to the page. Closed after the test.
 */
export async function openAiReplay(
  ...answers: ReadonlyArray<readonly string[]>
): Promise<{ model: ModelProvider; upstream: ReplayServer }> {
  const upstream = await startReplayServer(...answers.map((deltas) => sse(chatCompletionStream(deltas))));
  onTestFinished(() => upstream.close());
  return {
    model: createModelProvider({ provider: 'openai-compatible', baseUrl: upstream.url, model: 'gpt-replay' }),
    upstream,
  };
}

/** Splits text into deltas of a few characters, as a model streams it (and so that Markdown arrives half-written). */
export function deltas(text: string, size = 24): string[] {
  const parts: string[] = [];
  for (let index = 0; index < text.length; index += size) parts.push(text.slice(index, index + size));
  return parts;
}
