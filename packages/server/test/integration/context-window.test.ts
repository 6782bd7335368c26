import { ErrorCode } from '@promethea/cpp-protocol';
import type { CPPServer } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { completion, expectError, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Twenty words: 99 ASCII code units, 25 tokens by the estimate, 29 with a message's overhead. */
const TEXT = 'word '.repeat(20).trim();
const MESSAGE_TOKENS = 29;
/** Room for six messages of TEXT besides the 50 tokens kept for the answer. */
const WINDOW = { contextWindow: 6 * MESSAGE_TOKENS + 50, reservedOutputTokens: 50 };

/** A server of `model` with WINDOW, storing in SQLite at `path` when given (else in memory), and a client of it. */
async function serveOn(model: ScriptedModel, path?: string): Promise<{ server: CPPServer; client: RawClient }> {
  const store = path === undefined ? undefined : SqliteStore.open(path);
  const server = await startServer({ ...(store ? { store } : {}), models: [{ provider: model, ...WINDOW }] });
  const client = await RawClient.connect(server.url);
  cleanups.push(async () => {
    await client.close();
    expect(client.invalid).toEqual([]);
    await server.close();
    await store?.close();
  });
  return { server, client };
}

describe('a branch longer than the context window', () => {
  it('is fitted: the model reads the first prompt and the latest turns, and the answer records where they resume', async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const model = new ScriptedModel({ chunks: [TEXT] }, { gated: false });
    const { client } = await serveOn(model, database.path);
    client.send('CPP_MODEL_LIST', {});
    expect((await client.next('CPP_MODELS')).payload.models[0]).toMatchObject({ contextWindow: 6 * 29 + 50 });
    const { threadId } = await openThread(client, { patches: true });
    const exchanges = [];
    for (let turn = 0; turn < 4; turn++) {
      const exchange = await prompt(client, threadId, TEXT);
      const { update } = await completion(client, threadId, exchange.assistantNodeId);
      exchanges.push({ ...exchange, answer: update.nodes[exchange.assistantNodeId]! });
    }
    // Three turns fit whole (up to 6 messages), and their answers record nothing.
    for (const { answer } of exchanges.slice(0, 3)) expect(answer.context).toBeUndefined();
    // The fourth has 7: u0 a0 u1 a1 u2 a2 u3. From u3 back, u1 is the last that fits, but it would follow u0 with
    // its answer a0 left out: the model reads u0, then from a1 on.
    const second = exchanges[1]!;
    const fourth = exchanges[3]!;
    const context = { fromNodeId: second.assistantNodeId, omittedNodes: 2 };
    expect(fourth.update.nodes[fourth.assistantNodeId]!.context).toEqual(context);
    expect(fourth.answer.context).toEqual(context);
    expect((await model.call(3)).messages).toEqual([
      { role: 'user', content: TEXT },
      { role: 'assistant', content: TEXT },
      { role: 'user', content: TEXT },
      { role: 'assistant', content: TEXT },
      { role: 'user', content: TEXT },
    ]);

    // Kept by the store: a server started again on the file syncs it.
    await cleanups.pop()?.();
    const again = await serveOn(new ScriptedModel({ chunks: [TEXT] }, { gated: false }), database.path);
    const sync = await openThread(again.client, { threadId });
    expect(sync.nodes[fourth.assistantNodeId]!.context).toEqual(context);
  });

  it("counts as the provider's reported usage showed: a model that counted three times the estimate reads less", async () => {
    // The first call's context is one message of TEXT: 29 tokens estimated, 87 counted by the provider.
    const model = new ScriptedModel(
      (call) => ({
        chunks: [TEXT],
        ending: { finishReason: 'stop', usage: { inputTokens: call === 0 ? 3 * MESSAGE_TOKENS : 1, outputTokens: 25 } },
      }),
      { gated: false },
    );
    const { client } = await serveOn(model);
    const { threadId } = await openThread(client, { patches: true });
    const first = await prompt(client, threadId, TEXT);
    await completion(client, threadId, first.assistantNodeId);
    // Three messages would fit the 174 estimated tokens of room; scaled by 3, 58: the first prompt and this one.
    const second = await prompt(client, threadId, TEXT);
    expect(second.update.nodes[second.assistantNodeId]!.context).toEqual({
      fromNodeId: second.userNodeId,
      omittedNodes: 1,
    });
    expect((await model.call(1)).messages).toHaveLength(2);
    await completion(client, threadId, second.assistantNodeId);
  });

  it('is fitted for each model of a prompt answered side by side, by its own window', async () => {
    // `wide` and `same` read alike (one window, one counter), and share one fitting; `narrow` reads four messages.
    const scripted = {
      wide: new ScriptedModel({ chunks: [TEXT] }, { gated: false }),
      same: new ScriptedModel({ chunks: [TEXT] }, { gated: false }),
      narrow: new ScriptedModel({ chunks: [TEXT] }, { gated: false }),
    };
    const narrowWindow = { contextWindow: 4 * MESSAGE_TOKENS + 50, reservedOutputTokens: 50 };
    const server = await startServer({
      models: Object.entries(scripted).map(([id, provider]) => ({
        id,
        label: id,
        provider,
        ...(id === 'narrow' ? narrowWindow : WINDOW),
      })),
    });
    const client = await RawClient.connect(server.url);
    cleanups.push(async () => {
      await client.close();
      await server.close();
    });
    const { threadId } = await openThread(client, { patches: true });
    const turns = [];
    for (let turn = 0; turn < 3; turn++) {
      const exchange = await prompt(client, threadId, TEXT);
      await completion(client, threadId, exchange.assistantNodeId);
      turns.push(exchange);
    }
    const asked = await prompt(client, threadId, TEXT, { models: ['wide', 'same', 'narrow'] });
    const [wide, same, narrow] = asked.update.nodes[asked.userNodeId]!.childrenIds.map(
      (id) => asked.update.nodes[id]!.context,
    );
    // u0 a0 u1 a1 u2 a2 u3: six messages' room reads u0, then from a1 on; four messages' reads u0, then from a2 on.
    expect(wide).toEqual({ fromNodeId: turns[1]!.assistantNodeId, omittedNodes: 2 });
    expect(same).toEqual(wide);
    expect(narrow).toEqual({ fromNodeId: turns[2]!.assistantNodeId, omittedNodes: 4 });
    const user = { role: 'user', content: TEXT };
    const assistant = { role: 'assistant', content: TEXT };
    expect((await scripted.wide.call(3)).messages).toEqual([user, assistant, user, assistant, user]);
    expect((await scripted.same.call(0)).messages).toEqual([user, assistant, user, assistant, user]);
    expect((await scripted.narrow.call(0)).messages).toEqual([user, assistant, user]);
  });

  it('refuses a prompt that cannot fit with CONTEXT_TOO_LONG, before any model call and without a change', async () => {
    const model = new ScriptedModel({ chunks: [TEXT] }, { gated: false });
    const { client } = await serveOn(model);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, TEXT);
    await completion(client, threadId, assistantNodeId);
    const before = await requestSync(client, threadId);

    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: TEXT.repeat(8), newNodeId: 'msg_toolong' },
      { id: 'p-1' },
    );
    const error = await expectError(client, ErrorCode.CONTEXT_TOO_LONG, { refId: 'p-1' });
    expect(error.message).toMatch(/reads 174 \(its context window of 224 tokens, less 50 kept for its answer\)/);
    expect(model.calls).toHaveLength(1);
    expect(await requestSync(client, threadId)).toEqual(before);

    // The thread is not left busy: a prompt that fits is answered.
    const next = await prompt(client, threadId, TEXT);
    await completion(client, threadId, next.assistantNodeId);
    expect(model.calls).toHaveLength(2);
  });
});
