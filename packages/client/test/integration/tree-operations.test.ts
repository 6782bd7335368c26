import { ErrorCode, findInvariantViolations, firstPrompts, getNode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { ENDLESS_ANSWERS, SHORT_ANSWERS, useRealServer } from '../support/real-server.js';
import { mirrorUntil } from '../support/session.js';

describe('regenerate, edit and deleteBranch against the real CPPServer', () => {
  const real = useRealServer();

  it('regenerates the answer at the head beside the first one, streaming it through onStream', async () => {
    const client = real.connect(await real.start(SHORT_ANSWERS));
    const first = await client.prompt({ userPrompt: 'Explain Clojure.' });
    const deltas: string[] = [];
    const second = await client.regenerate({ onStream: (delta) => deltas.push(delta) });

    const graph = client.graph()!;
    expect(second).toMatchObject({ threadId: first.threadId, userNodeId: first.userNodeId, status: 'completed' });
    expect(graph.nodes[first.userNodeId]?.childrenIds).toEqual([first.assistantNodeId, second.assistantNodeId]);
    expect(graph.activeHeadMessageId).toBe(second.assistantNodeId);
    expect(deltas.join('')).toBe(second.content);
    expect(graph.nodes[first.assistantNodeId]).toMatchObject({ status: 'completed', content: first.content });
  });

  it('halts the streaming answer at what the user saw before regenerating it', async () => {
    const client = real.connect(await real.start(ENDLESS_ANSWERS));
    const { threadId } = await client.openThread();
    const first = client.prompt({ userPrompt: 'Explain Clojure.' });
    await mirrorUntil(client, threadId, () => (client.streamingNode()?.content.length ?? 0) > 10);
    const streamingId = client.streamingNode()!.id;

    const second = client.regenerate({ nodeId: streamingId, receivedContentLength: 10 });
    expect(await first).toMatchObject({ assistantNodeId: streamingId, status: 'interrupted' });
    expect((await first).content).toHaveLength(10);
    const regenerated = await mirrorUntil(client, threadId, (graph) => graph.activeHeadMessageId !== streamingId);
    await client.stop();
    expect(await second).toMatchObject({ status: 'interrupted', assistantNodeId: regenerated.activeHeadMessageId });
    expect(getNode(client.graph()!, streamingId)?.parentId).toBe(
      getNode(client.graph()!, (await second).assistantNodeId)?.parentId,
    );
  });

  it('edits a prompt as a new prompt beside it, keeping the old branch; the first prompt as a first prompt beside it', async () => {
    const client = real.connect(await real.start(SHORT_ANSWERS));
    const first = await client.prompt({ userPrompt: 'Explain Clojure.' });
    const second = await client.prompt({ userPrompt: 'And its macros?' });
    const edited = await client.edit({ nodeId: second.userNodeId, userPrompt: 'And its protocols?' });

    const graph = client.graph()!;
    expect(graph.nodes[first.assistantNodeId]?.childrenIds).toEqual([second.userNodeId, edited.userNodeId]);
    expect(graph.nodes[edited.userNodeId]).toMatchObject({ role: 'user', content: 'And its protocols?' });
    expect(graph.nodes[second.assistantNodeId]).toMatchObject({ status: 'completed' });
    expect(graph.activeHeadMessageId).toBe(edited.assistantNodeId);
    const firstEdit = await client.edit({ nodeId: first.userNodeId, userPrompt: 'Explain Scheme.' });
    const after = client.graph()!;
    expect(firstPrompts(after).map((node) => node.content)).toEqual(['Explain Clojure.', 'Explain Scheme.']);
    expect(after.nodes[firstEdit.userNodeId]?.parentId).toBeNull();
    expect(after).toMatchObject({ rootNodeId: firstEdit.userNodeId, activeHeadMessageId: firstEdit.assistantNodeId });
    expect(findInvariantViolations(after)).toEqual([]);
    await expect(client.edit({ nodeId: first.assistantNodeId, userPrompt: 'Words.' })).rejects.toThrow(/no user node/);
  });

  it('deletes a branch, moving the head out of it; the root is refused with INVALID_NODE', async () => {
    const client = real.connect(await real.start(SHORT_ANSWERS));
    const first = await client.prompt({ userPrompt: 'Explain Clojure.' });
    const kept = await client.prompt({ userPrompt: 'And its macros?' });
    await client.anchor(first.assistantNodeId);
    const doomed = await client.prompt({ userPrompt: 'And its protocols?' });

    const graph = await client.deleteBranch(doomed.userNodeId);
    expect(graph.nodes[doomed.userNodeId]).toBeUndefined();
    expect(graph.nodes[doomed.assistantNodeId]).toBeUndefined();
    expect(graph.nodes[first.assistantNodeId]?.childrenIds).toEqual([kept.userNodeId]);
    expect(graph.activeHeadMessageId).toBe(first.assistantNodeId);
    expect(findInvariantViolations(graph)).toEqual([]);
    await expect(client.deleteBranch(first.userNodeId)).rejects.toMatchObject({ code: ErrorCode.INVALID_NODE });
    await expect(client.deleteBranch(doomed.userNodeId)).rejects.toMatchObject({ code: ErrorCode.NOT_FOUND });
  });
});
