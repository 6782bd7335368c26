import { MemoryStore } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { openThread, prompt } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

describe('a thread whose every subscriber left while its answer streamed', () => {
  const fixture = useServer();

  it('takes a prompt once the answer has ended without anybody listening', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel({ chunks: ['Nobody', ' is', ' listening'] });
    await fixture.start({ model, store });
    const leaving = await fixture.connect();
    const { threadId } = await openThread(leaving, { patches: true });
    const first = await prompt(leaving, threadId, 'Answer while I am away');
    await leaving.close();

    // The answer ends with nobody subscribed, so the server lets go of the thread; the next client loads it again.
    (await model.call(0)).releaseAll();
    await eventually(
      async () =>
        (await store.loadThread(threadId))?.graph.nodes[first.assistantNodeId]?.status === 'completed'
          ? true
          : undefined,
      'the answer committed',
    );

    const back = await fixture.connect();
    await openThread(back, { threadId, patches: true });
    const refused = back.next('CPP_ERROR').then((error) => error.payload);
    const next = await Promise.race([prompt(back, threadId, 'I am back'), refused]);
    expect(next).toHaveProperty('assistantNodeId');
  });
});
