import { type CPPServerOptions, DemoToolsProvider, demoTools } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import type { RawClient } from '../support/raw-client.js';
import { completion, openThread, prompt } from '../support/protocol-steps.js';
import { useProxiedInstances } from './proxied-instances.js';

/** Each instance answers with the demo's agent and has the demo's tools (a quick count). */
const AGENT: CPPServerOptions = {
  model: undefined,
  models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
  tools: demoTools({ countDelayMs: 0 }),
};

/** The next CPP_TOOL_CALL of the node in `state`. */
const toolCallIn = (client: RawClient, nodeId: string, state: string) =>
  client.next('CPP_TOOL_CALL', (frame) => frame.payload.nodeId === nodeId && frame.payload.toolCall.state === state);

/**
 * docs/PROTOCOL.md §26.9, §26.10: a person's answer to a call reaches the instance that runs the answer, whichever
 * instance the person is connected to, as a stop or a pivot does.
 */
describe('answers to tool calls on servers sharing PostgreSQL and Redis', () => {
  const instances = useProxiedInstances();

  it("an approval and a client tool's result sent to one instance reach the answer running on the other", async () => {
    const [running, other] = await instances.start(2, { chunks: [] }, AGENT);
    const asker = await running!.connect();
    const { threadId } = await openThread(asker, { patches: true });
    const elsewhere = await other!.connect();
    await openThread(elsewhere, { threadId, patches: true });

    const note = await prompt(asker, threadId, 'Keep a note: buy milk');
    const waiting = (await toolCallIn(elsewhere, note.assistantNodeId, 'approval-requested')).payload.toolCall;
    elsewhere.send('CPP_TOOL_APPROVAL', {
      activeThreadId: threadId,
      nodeId: note.assistantNodeId,
      toolCallId: waiting.toolCallId,
      approved: true,
    });
    const saved = await toolCallIn(asker, note.assistantNodeId, 'output-available');
    expect(saved.payload.toolCall).toMatchObject({ approval: { approved: true }, output: 'Saved note 1.' });
    const { update } = await completion(asker, threadId, note.assistantNodeId);
    expect(update.nodes[note.assistantNodeId]!.content).toContain('Saved note 1.');

    const zone = await prompt(asker, threadId, 'What is my time zone?');
    const asked = (await toolCallIn(elsewhere, zone.assistantNodeId, 'input-available')).payload.toolCall;
    expect(asked).toMatchObject({ toolName: 'time_zone', runsOn: 'client' });
    elsewhere.send('CPP_TOOL_RESULT', {
      activeThreadId: threadId,
      nodeId: zone.assistantNodeId,
      toolCallId: asked.toolCallId,
      output: 'Europe/Paris',
    });
    const { update: answered } = await completion(asker, threadId, zone.assistantNodeId);
    expect(answered.nodes[zone.assistantNodeId]).toMatchObject({
      content: expect.stringContaining('Your time zone is Europe/Paris.'),
      toolCalls: [{ toolCallId: asked.toolCallId, state: 'output-available', output: 'Europe/Paris' }],
    });
    await completion(elsewhere, threadId, zone.assistantNodeId);
    expect(running!.errors).toEqual([]);
    expect(other!.errors).toEqual([]);
  });
});
