// @vitest-environment happy-dom
import { DemoToolsProvider, demoTools } from '@promethea/cpp-server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { startServer } from '../../server/test/support/start-server.js';
import { useCPP, useToolCalls } from '../src/index.js';
import { endpointOf } from './support/demo-server.js';
import { act, renderHook, waitFor } from './support/testing-library.js';

/** useToolCalls on a server whose model is the demo's agent, with the demo's tools (a clock, a quick count). */
async function renderToolCalls() {
  const server = await startServer({
    models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
    tools: demoTools({ now: () => Date.UTC(2026, 11, 5), countDelayMs: 0 }),
  });
  onTestFinished(() => server.close());
  const endpoint = endpointOf(server);
  const hook = renderHook(() => {
    const cpp = useCPP({ endpoint, did: 'did:key:z6MkToolCallsTest' });
    return { cpp, tools: useToolCalls(cpp.client, cpp.graph) };
  });
  await waitFor(() => expect(hook.result.current.cpp.connection).toBe('live'));
  const client = hook.result.current.cpp.client!;
  await act(() => client.openThread());
  return { ...hook, client };
}

describe('useToolCalls', () => {
  it("lists the branch's tool calls with the answer that made them; calls that ran wait for nothing", async () => {
    const { result, client } = await renderToolCalls();
    const answered = await act(() => client.prompt({ userPrompt: 'What time is it? Then count.' }));
    expect(result.current.tools.calls).toMatchObject([
      { nodeId: answered.assistantNodeId, call: { toolName: 'clock', state: 'output-available' }, waitsFor: undefined },
      { nodeId: answered.assistantNodeId, call: { toolName: 'count_to', output: '1 2 3 4 5' }, waitsFor: undefined },
    ]);
    expect(result.current.tools.waiting).toEqual([]);
  });

  it('shows a call waiting for approval, and denies or approves it', async () => {
    const { result, client } = await renderToolCalls();
    const denied = client.prompt({ userPrompt: 'Keep a note: buy milk' });
    await waitFor(() => expect(result.current.tools.waiting).toHaveLength(1));
    const [asked] = result.current.tools.waiting;
    expect(asked).toMatchObject({ call: { toolName: 'save_note', state: 'approval-requested' }, waitsFor: 'approval' });
    await act(() => result.current.tools.deny(asked!, 'not today'));
    expect((await denied).content).toContain('You did not approve it, so I kept nothing.');
    expect(result.current.tools.calls.at(-1)).toMatchObject({
      call: { state: 'output-denied', approval: { approved: false, reason: 'not today' } },
      waitsFor: undefined,
    });

    const approved = client.prompt({ userPrompt: 'Keep a note: buy bread' });
    await waitFor(() => expect(result.current.tools.waiting).toHaveLength(1));
    await act(() => result.current.tools.approve(result.current.tools.waiting[0]!));
    expect((await approved).content).toContain('Saved note 1.');
    expect(result.current.tools.waiting).toEqual([]);
  });

  it("shows a client tool's call as waiting for an answer, and answers it", async () => {
    const { result, client } = await renderToolCalls();
    const answered = client.prompt({ userPrompt: 'What is my time zone?' });
    await waitFor(() => expect(result.current.tools.waiting).toHaveLength(1));
    const [call] = result.current.tools.waiting;
    expect(call).toMatchObject({ call: { toolName: 'time_zone', runsOn: 'client' }, waitsFor: 'answer' });
    await act(() => result.current.tools.answer(call!, { output: 'Europe/Paris' }));
    expect((await answered).content).toContain('Your time zone is Europe/Paris.');
    expect(result.current.tools.calls[0]).toMatchObject({
      call: { state: 'output-available', output: 'Europe/Paris' },
    });
  });
});
