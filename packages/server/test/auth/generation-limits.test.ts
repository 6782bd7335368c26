import { newMessageId } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { expectError, nextUpdate, openThread, pivot, prompt, requestSync } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** Answers that stream until they are stopped: each prompt holds one generation for as long as the test wants. */
const endless = () => new ScriptedModel({ chunks: () => 'and ' });

/** A prompt the server must refuse with RATE_LIMITED, leaving its thread as it was. */
async function refusedPrompt(client: RawClient, threadId: string, pattern: RegExp): Promise<void> {
  const id = `refused-${newMessageId()}`;
  client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: 'one more', newNodeId: newMessageId() }, { id });
  expect((await expectError(client, 'RATE_LIMITED', { refId: id })).message).toMatch(pattern);
}

async function stop(client: RawClient, threadId: string, nodeId: string): Promise<void> {
  client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId });
  await nextUpdate(client, threadId, (update) => update.nodes[nodeId]?.status === 'interrupted');
}

describe('the generation limits', () => {
  it('refuses with RATE_LIMITED an answer past maxGenerationsPerConnection, creating nothing, and takes one again once an answer stops', async () => {
    await fixture.start({ model: endless(), limits: { maxGenerationsPerConnection: 2 } });
    const client = await fixture.connect({ did: 'did:key:zAlice' });
    const [first, second, third] = [await openThread(client), await openThread(client), await openThread(client)];
    const running = await prompt(client, first.threadId, 'one');
    await prompt(client, second.threadId, 'two');
    await refusedPrompt(client, third.threadId, /this connection has 2 answers/);
    expect((await requestSync(client, third.threadId)).nodes).toEqual({});
    // The same identity's other connection is not this one.
    const other = await fixture.connect({ did: 'did:key:zAlice' });
    await prompt(other, (await openThread(other)).threadId, 'elsewhere');
    await stop(client, first.threadId, running.assistantNodeId);
    await prompt(client, third.threadId, 'three');
  });

  it('lets a pivot replace an answer at the limit: the halted answer makes room for its branch', async () => {
    await fixture.start({ model: endless(), limits: { maxGenerationsPerConnection: 1 } });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    const running = await prompt(client, threadId, 'one');
    await refusedPrompt(client, (await openThread(client)).threadId, /this connection has 1 answers/);
    await pivot(client, threadId, running.assistantNodeId, 'instead');
  });

  // PROTOCOL.md §11.1 step 7 and §24.1 step 7: the halt frees the halted answer's place, which is not the asker's
  // when another connection asked for it, so the new answer is refused after the halt.
  it.each(['CPP_PIVOT_INIT', 'CPP_REGENERATE'] as const)(
    'keeps the answer a refused %s halted, as it was cut, when the halt made no room for the new answer',
    async (type) => {
      await fixture.start({ model: endless(), limits: { maxGenerationsPerConnection: 1 } });
      const alice = await fixture.connect();
      const { threadId } = await openThread(alice);
      const running = await prompt(alice, threadId, 'one');
      const bob = await fixture.connect();
      await prompt(bob, (await openThread(bob)).threadId, 'busy');
      await openThread(bob, { threadId });
      const newNodeId = newMessageId();
      if (type === 'CPP_PIVOT_INIT') {
        bob.send(
          type,
          {
            activeThreadId: threadId,
            interruptedNodeId: running.assistantNodeId,
            userPrompt: 'instead',
            newBranchNodeId: newNodeId,
            receivedContentLength: 0,
          },
          { id: 'replace' },
        );
      } else
        bob.send(
          type,
          { activeThreadId: threadId, userNodeId: running.userNodeId, newNodeId, receivedContentLength: 0 },
          { id: 'replace' },
        );
      expect((await expectError(bob, 'RATE_LIMITED', { refId: 'replace' })).message).toMatch(
        /this connection has 1 answers/,
      );
      const { nodes } = await requestSync(bob, threadId);
      expect(Object.keys(nodes)).toEqual([running.userNodeId, running.assistantNodeId]);
      expect(nodes[running.assistantNodeId]).toMatchObject({ status: 'interrupted', content: '' });
    },
  );

  it("counts one identity's answers over all its connections against maxGenerationsPerIdentity, and not another's", async () => {
    await fixture.start({ model: endless(), limits: { maxGenerationsPerIdentity: 2 } });
    const [first, second] = [
      await fixture.connect({ did: 'did:key:zAlice' }),
      await fixture.connect({ did: 'did:key:zAlice' }),
    ];
    await prompt(first, (await openThread(first)).threadId, 'one');
    const running = await openThread(second);
    const answer = await prompt(second, running.threadId, 'two');
    await refusedPrompt(first, (await openThread(first)).threadId, /did:key:zAlice has 2 answers/);
    const bob = await fixture.connect({ did: 'did:key:zBob' });
    await prompt(bob, (await openThread(bob)).threadId, 'bob');
    await stop(second, running.threadId, answer.assistantNodeId);
    await prompt(first, (await openThread(first)).threadId, 'three');
  });

  it('counts every answer of the server against maxGenerations, whoever asks', async () => {
    await fixture.start({ model: endless(), limits: { maxGenerations: 2 } });
    for (const did of ['did:key:zAlice', 'did:key:zBob']) {
      const client = await fixture.connect({ did });
      await prompt(client, (await openThread(client)).threadId, did);
    }
    const carol = await fixture.connect({ did: 'did:key:zCarol' });
    await refusedPrompt(carol, (await openThread(carol)).threadId, /the server writes 2 answers at once/);
  });

  it('counts a regenerated answer like any other', async () => {
    await fixture.start({ model: endless(), limits: { maxGenerationsPerConnection: 1 } });
    const client = await fixture.connect();
    const busy = await openThread(client);
    const running = await prompt(client, busy.threadId, 'one');
    await stop(client, busy.threadId, running.assistantNodeId);
    const other = await openThread(client);
    await prompt(client, other.threadId, 'two');
    client.send(
      'CPP_REGENERATE',
      { activeThreadId: busy.threadId, userNodeId: running.userNodeId, newNodeId: newMessageId() },
      { id: 'again' },
    );
    await expectError(client, 'RATE_LIMITED', { refId: 'again' });
  });
});
