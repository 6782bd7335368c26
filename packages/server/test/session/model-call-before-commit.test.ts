import { ErrorCode, type TreeChange } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { MemoryStore, type CommitMeta } from '@promethea/cpp-server';
import { FailingStore } from '../support/failing-store.js';
import { HeldStore } from '../support/held-store.js';
import { completion, expectError, nextUpdate, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

describe("an answer's model call", () => {
  it('is made before the commit of its node, and its text waits until clients have the node', async () => {
    const store = new HeldStore();
    const model = new ScriptedModel({ chunks: ['Early', ' text'] }, { gated: false });
    await fixture.start({ store, model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    // Frames are applied in receipt order, so a round trip that waits for nothing of this thread is another thread's.
    const { threadId: otherThreadId } = await openThread(client);
    store.hold();
    const mark = client.mark();
    client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: 'Hello', newNodeId: 'msg_user' });
    // The call is made, and its whole answer given, while the commit waits.
    const call = await model.call(0);
    expect(call.messages).toEqual([{ role: 'user', content: 'Hello' }]);
    await requestSync(client, otherThreadId);
    expect(client.since(mark).map((frame) => frame.type)).toEqual(['CPP_SYNC_GRAPH']);
    store.release();
    const update = await nextUpdate(client, threadId, (candidate) => candidate.nodes.msg_user !== undefined);
    const assistantNodeId = update.nodes.msg_user!.childrenIds[0]!;
    await completion(client, threadId, assistantNodeId);
    const types = client
      .since(mark)
      .map((frame) => frame.type)
      .filter((type) => type !== 'CPP_SYNC_GRAPH');
    expect(types).toEqual(['CPP_GRAPH_PATCH', 'CPP_STREAM_CHUNK', 'CPP_STREAM_COMPLETED', 'CPP_GRAPH_PATCH']);
    expect((await requestSync(client, threadId)).nodes[assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Early text',
    });
  });

  it('is made before the commit begins, also on a store that commits at once', async () => {
    const model = new ScriptedModel({ chunks: ['Answer'] }, { gated: false });
    /** How many calls the model had been asked for when each commit began. */
    const callsAtCommit: number[] = [];
    const store = new (class extends MemoryStore {
      override commit(change: TreeChange, meta: CommitMeta): Promise<void> {
        callsAtCommit.push(model.calls.length);
        return super.commit(change, meta);
      }
    })();
    await fixture.start({ store, model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Hello');
    await completion(client, threadId, assistantNodeId);
    // The prompt's commit, then the answer's end.
    expect(callsAtCommit).toEqual([1, 1]);
  });

  it('is aborted when the commit fails: nothing streams, nothing was sent, and the thread takes the next prompt', async () => {
    const store = new FailingStore();
    const model = new ScriptedModel({ chunks: ['Never', ' shown'] });
    await fixture.start({ store, model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    store.failCommits = true;
    client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: 'Hello', newNodeId: 'msg_refused' });
    await expectError(client, ErrorCode.INTERNAL);
    const call = await model.call(0);
    expect(call.signal.aborted).toBe(true);
    expect(client.all('CPP_STREAM_CHUNK')).toEqual([]);
    expect(await requestSync(client, threadId)).toMatchObject({ version: 0, nodes: {} });
    store.failCommits = false;
    const { assistantNodeId } = await prompt(client, threadId, 'Again');
    (await model.call(1)).releaseAll();
    await completion(client, threadId, assistantNodeId);
  });

  it('is never made for a prompt the thread refuses', async () => {
    const model = new ScriptedModel({ chunks: ['Answer'] });
    await fixture.start({ model });
    const client = await fixture.connect();
    const { threadId } = await openThread(client, { patches: true });
    client.send('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'Hello',
      newNodeId: 'msg_u',
      expectedVersion: 7,
    });
    await expectError(client, ErrorCode.CONFLICT);
    expect(model.calls).toEqual([]);
  });
});
