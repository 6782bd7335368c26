import { once } from 'node:events';
import { ErrorCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { completion, expectError, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import { FailingStore } from '../support/failing-store.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

describe('a failing store', () => {
  it('answers a frame it could not carry out with INTERNAL, changes nothing, and reports the error to the server', async () => {
    const store = new FailingStore();
    const server = await fixture.start({ store, model: new ScriptedModel({ chunks: ['Fine'] }, { gated: false }) });
    const errors: unknown[] = [];
    server.on('error', (error) => errors.push(error));
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const before = await requestSync(client, threadId);

    store.failCommits = true;
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'Hello', newNodeId: 'msg_failing' },
      { id: 'prompt-frame' },
    );
    const error = await expectError(client, ErrorCode.INTERNAL, { refId: 'prompt-frame', refType: 'CPP_PROMPT' });
    expect(error.message).not.toContain('database');
    expect(errors).toEqual([new Error('database is locked')]);
    expect(await requestSync(client, threadId)).toEqual(before);

    store.failCommits = false;
    const exchange = await prompt(client, threadId, 'Hello', { newNodeId: 'msg_failing' });
    await completion(client, threadId, exchange.assistantNodeId);
  });

  it('reports a batch of streamed text it could not persist to the server, and the answer streams on', async () => {
    const store = new FailingStore();
    const model = new ScriptedModel({ chunks: ['Hello', ' world'] });
    const server = await fixture.start({ store, model, persistIntervalMs: 1 });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    store.failStreamingSaves = true;
    const reported = once(server, 'error');
    const { assistantNodeId } = await prompt(client, threadId, 'Hi');
    const call = await model.call(0);
    call.release();
    expect(await reported).toEqual([new Error('database is locked')]);
    call.releaseAll();
    const { update } = await completion(client, threadId, assistantNodeId);
    expect(update.nodes[assistantNodeId]).toMatchObject({ status: 'completed', content: 'Hello world' });
  });
});
