import { newMessageId } from '@promethea/cpp-protocol';
import type { CPPServerOptions } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { completion, nextUpdate, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import { ScriptedModel, type ScriptedAnswer } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

type ServerOptions = Omit<CPPServerOptions, 'models'>;

// The summarise strategy of fitting a branch to a window (docs/PROTOCOL.md §28.5), over a real WebSocket: what the
// window leaves out is summarised by the model named, the summary read in its place, recorded on the answer, and made
// once per branch point.

const fixture = useServer();

/** Twenty words: 29 tokens with a message's overhead, by the estimate. */
const TEXT = 'word '.repeat(20).trim();
/** Six messages of TEXT besides the 50 tokens kept for the answer; a tenth of the rest (17 tokens) for a summary. */
const WINDOW = { contextWindow: 6 * 29 + 50, reservedOutputTokens: 50 };
const SUMMARY = 'They said words, twenty at a time.';

/** Answering models that summarise by `summarizer`, and a thread of three turns answered in full. */
async function threeTurns(
  summaries: (call: number) => ScriptedAnswer = () => ({ chunks: [SUMMARY] }),
  {
    answers = () => ({ chunks: [TEXT] }),
    ...options
  }: ServerOptions & { answers?: (call: number) => ScriptedAnswer } = {},
) {
  const main = new ScriptedModel(answers, { gated: false });
  const other = new ScriptedModel({ chunks: [TEXT] }, { gated: false });
  const summarizer = new ScriptedModel(summaries, { gated: false });
  const summarizing = { ...WINDOW, contextStrategy: 'summarize' as const, summaryModel: 'summarizer' };
  await fixture.start({
    models: [
      { id: 'main', provider: main, ...summarizing },
      { id: 'other', provider: other, ...summarizing },
      { id: 'summarizer', provider: summarizer },
    ],
    ...options,
  });
  const client = await fixture.connect();
  const { threadId } = await openThread(client, { patches: true });
  const exchanges = [];
  for (let turn = 0; turn < 3; turn++) {
    const exchange = await prompt(client, threadId, TEXT);
    await completion(client, threadId, exchange.assistantNodeId);
    exchanges.push(exchange);
  }
  return { main, other, summarizer, client, threadId, exchanges };
}

describe('a branch longer than the window, fitted by summarising', () => {
  it('summarises what is left out with the model named, gives the summary to the model, and records it', async () => {
    const { main, summarizer, client, threadId, exchanges } = await threeTurns();
    expect(summarizer.calls).toHaveLength(0);
    // The fourth turn has 7 messages (203 tokens) for 174: with 17 kept for a summary, 5 fit.
    const fourth = await prompt(client, threadId, TEXT);
    const { update } = await completion(client, threadId, fourth.assistantNodeId);
    const context = { fromNodeId: exchanges[1]!.assistantNodeId, omittedNodes: 2, summary: SUMMARY };
    expect(update.nodes[fourth.assistantNodeId]!.context).toEqual(context);
    expect(fourth.update.nodes[fourth.assistantNodeId]!.context).toEqual(context);
    // The summariser read what was left out: the first answer and the second prompt.
    expect(summarizer.calls).toHaveLength(1);
    const asked = String(summarizer.calls[0]!.messages[0]!.content);
    expect(asked).toMatch(/^Summarise this part of a conversation in at most 20 words/);
    expect(asked.endsWith(`Assistant: ${TEXT}\n\nUser: ${TEXT}`)).toBe(true);
    // The answering model read the first prompt with the summary, then the branch from the second answer on.
    const read = (await main.call(3)).messages;
    expect(read.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(read[0]!.content).toBe(
      `${TEXT}\n\n[What was said after this message and before the next is left out to fit the context window. Its summary: ${SUMMARY}]`,
    );
  });

  it('makes the summary once per branch point: a regenerate and answers side by side read the one made', async () => {
    const { summarizer, client, threadId } = await threeTurns();
    const fourth = await prompt(client, threadId, TEXT, { models: ['main', 'other'] });
    const [first, second] = fourth.update.nodes[fourth.userNodeId]!.childrenIds;
    await completion(client, threadId, first!);
    await completion(client, threadId, second!);
    expect(summarizer.calls).toHaveLength(1);
    expect(fourth.update.nodes[second!]!.context?.summary).toBe(SUMMARY);

    const newNodeId = newMessageId();
    client.send('CPP_REGENERATE', {
      activeThreadId: threadId,
      userNodeId: fourth.userNodeId,
      newNodeId,
      model: 'main',
    });
    const regenerated = await nextUpdate(client, threadId, (candidate) => candidate.nodes[newNodeId] !== undefined);
    expect(regenerated.nodes[newNodeId]!.context?.summary).toBe(SUMMARY);
    await completion(client, threadId, newNodeId);
    expect(summarizer.calls).toHaveLength(1);
  });

  it('drops what is left out when the summary fails, and asks again for the next answer', async () => {
    const { summarizer, client, threadId, exchanges } = await threeTurns((call) =>
      call === 0 ? { chunks: [], ending: new Error('the summariser is down') } : { chunks: [SUMMARY] },
    );
    const fourth = await prompt(client, threadId, TEXT, { model: 'main' });
    const { update } = await completion(client, threadId, fourth.assistantNodeId);
    expect(update.nodes[fourth.assistantNodeId]!.context).toEqual({
      fromNodeId: exchanges[1]!.assistantNodeId,
      omittedNodes: 2,
    });
    const newNodeId = newMessageId();
    client.send('CPP_REGENERATE', {
      activeThreadId: threadId,
      userNodeId: fourth.userNodeId,
      newNodeId,
      model: 'main',
    });
    const again = await completion(client, threadId, newNodeId);
    expect(summarizer.calls).toHaveLength(2);
    expect(again.update.nodes[newNodeId]!.context?.summary).toBe(SUMMARY);
  });

  it('gives up a summary that takes longer than summaryTimeoutMs: the answer reads without it', async () => {
    // The summariser never answers; the server waits for it 1 ms.
    const hung = { chunks: [SUMMARY], gated: true };
    const { summarizer, client, threadId, exchanges } = await threeTurns(() => hung, { summaryTimeoutMs: 1 });
    const fourth = await prompt(client, threadId, TEXT, { model: 'main' });
    const { update } = await completion(client, threadId, fourth.assistantNodeId);
    expect(update.nodes[fourth.assistantNodeId]!.context).toEqual({
      fromNodeId: exchanges[1]!.assistantNodeId,
      omittedNodes: 2,
    });
    expect(summarizer.calls).toHaveLength(1);
    expect(summarizer.calls[0]!.signal.aborted).toBe(true);
  });

  it('gives up a summary when a stop comes for the answer it precedes: the answer starts without it, and stops', async () => {
    // The fourth prompt's summary fails; the regenerate's hangs, until the stop. The regenerated answer waits for
    // the test, so that the stop finds it streaming.
    const { summarizer, client, threadId, exchanges } = await threeTurns(
      (call) =>
        call === 0 ? { chunks: [], ending: new Error('the summariser is down') } : { chunks: [SUMMARY], gated: true },
      { answers: (call) => ({ chunks: [TEXT], gated: call === 4 }) },
    );
    const fourth = await prompt(client, threadId, TEXT, { model: 'main' });
    await completion(client, threadId, fourth.assistantNodeId);
    const newNodeId = newMessageId();
    client.send('CPP_REGENERATE', {
      activeThreadId: threadId,
      userNodeId: fourth.userNodeId,
      newNodeId,
      model: 'main',
    });
    const summarising = await summarizer.call(1);
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: newNodeId, receivedContentLength: 0 });
    const halted = await client.next('CPP_STREAM_HALTED', (frame) => frame.payload.interruptedNodeId === newNodeId);
    expect(halted.payload.finalContentLength).toBe(0);
    expect(summarising.signal.aborted).toBe(true);
    const kept = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[newNodeId]?.status === 'interrupted',
    );
    expect(kept.nodes[newNodeId]!.context).toEqual({ fromNodeId: exchanges[1]!.assistantNodeId, omittedNodes: 2 });
    expect((await requestSync(client, threadId)).nodes[newNodeId]).toMatchObject({
      status: 'interrupted',
      content: '',
    });
  });

  it('gives up a summary when the server shuts down: closing does not wait for the summariser', async () => {
    const hung = { chunks: [SUMMARY], gated: true };
    const { summarizer, client, threadId } = await threeTurns(() => hung);
    client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: TEXT, newNodeId: newMessageId(), model: 'main' });
    const summarising = await summarizer.call(0);
    await fixture.server.close();
    expect(summarising.signal.aborted).toBe(true);
  });
});
