// @vitest-environment happy-dom
import { act, renderHook, waitFor } from './support/testing-library.js';
import { describe, expect, it } from 'vitest';
import { useBranch, useCPP } from '../src/index.js';
import { endpointOf, startDemoServer } from './support/demo-server.js';

async function renderBranch(slow = false, reasoningWords = 0, models?: string[]) {
  const server = await startDemoServer({ slow, reasoningWords, models });
  const endpoint = endpointOf(server);
  const hook = renderHook(() => {
    const cpp = useCPP({ endpoint, did: 'did:key:z6MkBranchTest' });
    return { cpp, branch: useBranch(cpp.client, cpp.graph) };
  });
  await waitFor(() => expect(hook.result.current.cpp.connection).toBe('live'));
  const client = hook.result.current.cpp.client!;
  await act(() => client.openThread());
  return { ...hook, client };
}

describe('useBranch', () => {
  it('shows the branch from the root to the head, and switches between siblings at a fork', async () => {
    const { result, client } = await renderBranch();
    const first = await act(() => client.prompt({ userPrompt: 'one' }));
    const second = await act(() => client.prompt({ userPrompt: 'two' }));
    await act(() => client.anchor(first.assistantNodeId));
    const third = await act(() => client.prompt({ userPrompt: 'three' }));

    const ids = () => result.current.branch.entries.map((entry) => entry.node.id);
    expect(ids()).toEqual([first.userNodeId, first.assistantNodeId, third.userNodeId, third.assistantNodeId]);
    const fork = result.current.branch.entries[2]!;
    expect(fork).toMatchObject({ siblingIds: [second.userNodeId, third.userNodeId], siblingIndex: 1 });

    await act(() => result.current.branch.showSibling(fork, -1));
    expect(ids()).toEqual([first.userNodeId, first.assistantNodeId, second.userNodeId, second.assistantNodeId]);
    expect(result.current.branch.headId).toBe(second.assistantNodeId);

    await act(() => result.current.branch.showBranchOf(third.userNodeId));
    expect(result.current.branch.headId).toBe(third.assistantNodeId);
  });

  it('names the streaming answer and keeps it on the branch while the head sits on its prompt', async () => {
    const { result, client } = await renderBranch(true);
    const generation = client.prompt({ userPrompt: 'a long one' });
    await waitFor(() => expect(result.current.branch.streaming).toBeDefined());
    const streaming = result.current.branch.streaming!;
    await act(() => client.anchor(streaming.parentId!));
    expect(result.current.branch.entries.map((entry) => entry.node.id)).toEqual([streaming.parentId, streaming.id]);
    await act(() => client.stop());
    await expect(generation).resolves.toMatchObject({ status: 'interrupted' });
    expect(result.current.branch.streaming).toBeUndefined();
    expect(result.current.branch.entries.map((entry) => entry.node.id)).toEqual([streaming.parentId]);
  });

  it('lists every answer streaming side by side, gives the branch entry its group, and regenerates with several models', async () => {
    const { result, client } = await renderBranch(true, 0, ['left', 'right']);
    const generation = client.prompt({ userPrompt: 'both of you', models: ['left', 'right'] });
    await waitFor(() => expect(result.current.branch.streamingNodes).toHaveLength(2));
    const [left, right] = result.current.branch.streamingNodes;
    expect(result.current.branch.streaming?.id).toBe(left!.id);
    const answer = result.current.branch.entries.at(-1)!;
    expect(answer.sideBySide.map((node) => node.model)).toEqual(['left', 'right']);
    await act(() => client.stop());
    await expect(generation).resolves.toMatchObject({ answers: [{ model: 'left' }, { model: 'right' }] });
    expect(result.current.branch.streamingNodes).toEqual([]);

    const regenerating = result.current.branch.regenerate(right!.id, { models: ['right', 'left'] });
    await waitFor(() => expect(result.current.branch.streamingNodes).toHaveLength(2));
    expect(result.current.branch.streamingNodes.map((node) => node.model)).toEqual(['right', 'left']);
    await act(() => client.stop());
    await act(() => regenerating);
  });

  it('regenerates an answer, edits a prompt and deletes a branch, each showing on the branch', async () => {
    const { result, client } = await renderBranch();
    const first = await act(() => client.prompt({ userPrompt: 'one' }));
    const second = await act(() => client.prompt({ userPrompt: 'two' }));
    const ids = () => result.current.branch.entries.map((entry) => entry.node.id);

    await act(() => result.current.branch.regenerate(second.assistantNodeId));
    const regenerated = result.current.branch.entries[3]!;
    expect(regenerated).toMatchObject({ siblingIds: [second.assistantNodeId, regenerated.node.id], siblingIndex: 1 });
    expect(regenerated.node.status).toBe('completed');

    await act(() => result.current.branch.edit(second.userNodeId, 'two, again'));
    const edited = result.current.branch.entries[2]!;
    expect(edited).toMatchObject({
      node: { content: 'two, again' },
      siblingIds: [second.userNodeId, edited.node.id],
      siblingIndex: 1,
    });

    await act(() => result.current.branch.deleteBranch(edited.node.id));
    expect(ids()).toEqual([first.userNodeId, first.assistantNodeId]);
    expect(client.graph()!.nodes[first.assistantNodeId]!.childrenIds).toEqual([second.userNodeId]);
  });

  it('regenerates and answers an edit with the model it is given, not the server default', async () => {
    const { result, client } = await renderBranch(false, 0, ['default-model', 'picked-model']);
    await act(() => client.prompt({ userPrompt: 'one' }));
    const asked = await act(() => client.prompt({ userPrompt: 'two' }));
    expect(client.graph()!.nodes[asked.assistantNodeId]!.model).toBe('default-model');

    await act(() => result.current.branch.regenerate(asked.assistantNodeId, { model: 'picked-model' }));
    expect(result.current.branch.entries[3]!.node).toMatchObject({ status: 'completed', model: 'picked-model' });

    await act(() => result.current.branch.edit(asked.userNodeId, 'two, again', { model: 'picked-model' }));
    expect(result.current.branch.entries.slice(2).map((entry) => entry.node)).toMatchObject([
      { content: 'two, again' },
      { status: 'completed', model: 'picked-model' },
    ]);
  });

  it("passes a reasoning model's reasoning through on the branch's nodes, apart from the answer", async () => {
    const { result, client } = await renderBranch(false, 6);
    const answered = await act(() => client.prompt({ userPrompt: 'why' }));
    const answer = result.current.branch.entries[1]!.node;
    expect(answer).toMatchObject({
      id: answered.assistantNodeId,
      content: answered.content,
      reasoning: answered.reasoning,
    });
    expect(answer.reasoning?.split(' ')).toHaveLength(6);
  });

  it('continues a stopped answer in the same node, which the branch shows grown', async () => {
    const { result, client } = await renderBranch(true);
    const generation = client.prompt({ userPrompt: 'a long one' });
    await waitFor(() => expect(result.current.branch.streaming?.content.length).toBeGreaterThan(0));
    await act(() => client.stop());
    const stopped = await generation;

    const continuing = result.current.branch.continueAnswer(stopped.assistantNodeId);
    await waitFor(() =>
      expect(result.current.branch.streaming?.content.length).toBeGreaterThan(stopped.content.length),
    );
    expect(result.current.branch.streaming?.id).toBe(stopped.assistantNodeId);
    await act(async () => {
      await client.stop();
      await continuing;
    });
    expect(result.current.branch.entries.at(-1)?.node).toMatchObject({
      id: stopped.assistantNodeId,
      status: 'interrupted',
    });
  });
});
