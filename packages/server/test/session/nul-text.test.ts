import { ErrorCode, newMessageId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { completion, openThread, prompt } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

// PostgreSQL text cannot hold U+0000, so no store may be asked to: prompts with it are refused at the edge, and a
// model's NUL is replaced by U+FFFD, one code unit for one, before anyone sees it.
describe('the NUL character', () => {
  it('is refused in a prompt with INVALID_FRAME, changing nothing', async () => {
    await fixture.start();
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'before\u0000after', newNodeId: newMessageId() },
      { id: 'nul' },
    );
    const error = await client.next('CPP_ERROR');
    expect(error.payload).toMatchObject({ code: ErrorCode.INVALID_FRAME, refId: 'nul' });
    expect(error.payload.message).toMatch(/^payload\.userPrompt: /);
    expect(client.all('CPP_GRAPH_PATCH')).toEqual([]);
  });

  it('in a model answer is streamed and stored as U+FFFD with the same length', async () => {
    await fixture.start({ model: new ScriptedModel(() => ({ chunks: ['a\u0000b', '\u0000'] }), { gated: false }) });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const answer = await prompt(client, threadId, 'Say something odd');
    const done = await completion(client, threadId, answer.assistantNodeId);
    const streamed = client
      .all('CPP_STREAM_CHUNK')
      .map((chunk) => chunk.payload.delta)
      .join('');
    expect(streamed).toBe('a\uFFFDb\uFFFD');
    expect(done.update.nodes[answer.assistantNodeId]?.content).toBe('a\uFFFDb\uFFFD');
  });
});

// SQLite and PostgreSQL keep text as UTF-8, which has no lone surrogate: a stored one came back as U+FFFD after a
// restart, with another text than clients had been sent.
describe('surrogates', () => {
  it('alone in a prompt are refused with INVALID_FRAME, changing nothing; a pair is taken', async () => {
    await fixture.start({ model: new ScriptedModel(() => ({ chunks: ['ok'] }), { gated: false }) });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'half \ud83d of a rocket', newNodeId: newMessageId() },
      { id: 'lone' },
    );
    const error = await client.next('CPP_ERROR');
    expect(error.payload).toMatchObject({ code: ErrorCode.INVALID_FRAME, refId: 'lone' });
    expect(error.payload.message).toMatch(/^payload\.userPrompt: .*lone surrogate/);
    expect(client.all('CPP_GRAPH_PATCH')).toEqual([]);
    await completion(client, threadId, (await prompt(client, threadId, 'a whole 🚀')).assistantNodeId);
  });

  it('of a pair the model split between two deltas go out in one chunk; a lone one is sent and stored as U+FFFD', async () => {
    await fixture.start({
      model: new ScriptedModel(() => ({ chunks: ['Go \ud83d', '\ude80 now', ' \udc00', ' \ud83d'] }), { gated: false }),
    });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const answer = await prompt(client, threadId, 'Launch');
    const done = await completion(client, threadId, answer.assistantNodeId);
    const deltas = client.all('CPP_STREAM_CHUNK').map((chunk) => chunk.payload.delta);
    for (const delta of deltas) expect(delta).toMatch(/^\P{Surrogate}*$/u);
    expect(deltas.join('')).toBe('Go 🚀 now \uFFFD \uFFFD');
    expect(done.update.nodes[answer.assistantNodeId]?.content).toBe('Go 🚀 now \uFFFD \uFFFD');
  });
});
