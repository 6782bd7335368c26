import {
  type CPPServer,
  createModelProvider,
  DemoToolsProvider,
  demoTools,
  type ServerTools,
} from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { CPPClient } from '@promethea/cpp-client';
import { ErrorCode, type ToolCall } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fixture, type ReplayServer, sse, startReplayServer } from '../model/replay-server.js';
import { completion, expectError, openThread, pivot, prompt, requestSync } from '../support/protocol-steps.js';
import { authenticate } from '../auth/support/authenticate.js';
import { TestIdentity } from '../auth/support/did-key-identity.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connect(server: CPPServer): Promise<RawClient> {
  const client = await RawClient.connect(server.url);
  cleanups.push(async () => {
    await client.close();
    expect(client.invalid).toEqual([]);
  });
  return client;
}

const NOW = Date.UTC(2026, 11, 5, 1, 30);

/** A `count_to` that records the signal of each run and counts only when told to: the test decides when it ends. */
function heldCount(): { tools: ServerTools; signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  return {
    signals,
    tools: {
      ...demoTools({ now: () => NOW }),
      count_to: {
        inputSchema: z.object({ to: z.number() }),
        execute: (_input, { signal, reportProgress }) => {
          signals.push(signal);
          reportProgress({ progress: 1, total: 5, message: 'counted 1 of 5' });
          return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
        },
      },
    },
  };
}

const toolCallsOf = (client: RawClient, nodeId: string): ToolCall[] =>
  client
    .all('CPP_TOOL_CALL')
    .filter((frame) => frame.payload.nodeId === nodeId)
    .map((frame) => frame.payload.toolCall);

describe('server tools', () => {
  it('demo-tools: calls clock, then count_to with progress, streams each input, and keeps every state in the node', async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const store = SqliteStore.open(database.path);
    cleanups.push(() => store.close());
    const server = await startServer({
      store,
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: demoTools({ now: () => NOW, countDelayMs: 0 }),
    });
    cleanups.push(() => server.close());
    const client = await connect(server);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'What time is it? Then count.');
    const { update } = await completion(client, threadId, assistantNodeId);

    const node = update.nodes[assistantNodeId]!;
    expect(node.content).toBe(
      'First I look at the clock. The clock says 2026-12-05T01:30:00.000Z. Now I count to 5, slowly: pivot while I ' +
        'count. I counted 1 2 3 4 5. That was an answer that called two tools.',
    );
    expect(node.toolCalls).toEqual([
      {
        toolCallId: expect.stringMatching(/^call_/),
        toolName: 'clock',
        step: 0,
        offset: 'First I look at the clock.'.length,
        state: 'output-available',
        input: '{}',
        output: '2026-12-05T01:30:00.000Z',
      },
      {
        toolCallId: expect.stringMatching(/^call_/),
        toolName: 'count_to',
        step: 1,
        offset: node.content.indexOf(' I counted'),
        state: 'output-available',
        input: '{"to":5}',
        output: '1 2 3 4 5',
      },
    ]);
    // Every state went out as it happened: announced, its input streamed, then available, progress, output.
    const count = node.toolCalls![1]!;
    const states = toolCallsOf(client, assistantNodeId)
      .filter((call) => call.toolCallId === count.toolCallId)
      .map((call) => (call.progress ? `progress ${call.progress.progress}` : call.state));
    expect(states).toEqual([
      'input-streaming',
      'input-available',
      'progress 1',
      'progress 2',
      'progress 3',
      'progress 4',
      'progress 5',
      'output-available',
    ]);
    const input = client
      .all('CPP_STREAM_CHUNK')
      .map((frame) => frame.payload)
      .filter((chunk) => chunk.part === 'tool-input' && chunk.toolCallId === count.toolCallId);
    expect(input.map((chunk) => [chunk.offset, chunk.delta])).toEqual([
      [0, '{"to'],
      [4, '":5}'],
    ]);
    // A later sync, and the store, hold the same node.
    expect((await requestSync(client, threadId)).nodes[assistantNodeId]).toEqual(node);
    expect((await store.loadThread(threadId))?.graph.nodes[assistantNodeId]).toEqual(node);
  });

  it('a pivot while a tool runs aborts its signal at once, keeps the call as interrupted, and branches', async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const { tools, signals } = heldCount();
    let store = SqliteStore.open(database.path);
    const first = store;
    cleanups.push(() => first.close());
    const server = await startServer({ store, models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }], tools });
    cleanups.push(() => server.close());
    const client = await connect(server);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Count for me');
    await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.progress?.progress === 1);
    const running = toolCallsOf(client, assistantNodeId).at(-1)!;
    expect(running).toMatchObject({ toolName: 'count_to', state: 'input-available' });

    const aborted = new Promise((resolve) => signals[0]?.addEventListener('abort', resolve));
    const branch = await pivot(client, threadId, assistantNodeId, 'Stop counting, tell me a joke');

    await aborted;
    const halted = client.all('CPP_STREAM_HALTED').at(-1)!.payload;
    const kept = branch.update.nodes[assistantNodeId]!;
    expect(kept.status).toBe('interrupted');
    expect(halted.finalContentLength).toBe(kept.content.length);
    expect(kept.toolCalls?.map((call) => [call.toolName, call.state])).toEqual([
      ['clock', 'output-available'],
      ['count_to', 'interrupted'],
    ]);
    // The interrupted call keeps its input and loses its progress; it is never run again.
    const { progress: _progress, ...stopped } = running;
    expect(kept.toolCalls?.[1]).toEqual({ ...stopped, state: 'interrupted' });
    // The new branch's model was told of the interrupted call, and starts over with the clock.
    await client.next('CPP_TOOL_CALL', (frame) => frame.payload.nodeId === branch.assistantNodeId);

    await server.close();
    await store.close();
    store = SqliteStore.open(database.path);
    cleanups.push(() => store.close());
    const restored = (await store.loadThread(threadId))!.graph.nodes[assistantNodeId];
    expect(restored).toEqual(kept);
  });

  it('OpenAI-compatible: runs parallel calls of one step, and sends their results back in the next request', async () => {
    const upstream: ReplayServer = await startReplayServer(
      sse(fixture('openai-tool-calls.sse')),
      sse(fixture('openai-chat-stream.sse')),
    );
    cleanups.push(() => upstream.close());
    const server = await startServer({
      model: createModelProvider({ provider: 'openai-compatible', baseUrl: upstream.url, model: 'gpt-4o-mini' }),
      tools: {
        get_weather: {
          description: 'The weather in a city',
          inputSchema: z.object({ city: z.string() }),
          execute: ({ city }: { city: string }) => `Sunny in ${city}`,
        },
        clock: { inputSchema: { type: 'object', properties: {} }, execute: () => new Date(NOW).toISOString() },
      },
    });
    cleanups.push(() => server.close());
    const client = await connect(server);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Weather in Paris, and the time?');
    const { update } = await completion(client, threadId, assistantNodeId);

    const node = update.nodes[assistantNodeId]!;
    expect(node.content).toBe('Let me look.Hello there!');
    expect(
      node.toolCalls?.map(({ toolName, step, offset, state, output }) => [toolName, step, offset, state, output]),
    ).toEqual([
      ['get_weather', 0, 12, 'output-available', 'Sunny in Paris'],
      ['clock', 0, 12, 'output-available', '2026-12-05T01:30:00.000Z'],
    ]);
    const [weather, clock] = node.toolCalls!;
    expect(upstream.requests[0]?.body).toMatchObject({
      tools: [{ function: { name: 'get_weather' } }, { function: { name: 'clock' } }],
    });
    expect(upstream.requests[1]?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'Weather in Paris, and the time?' },
        {
          role: 'assistant',
          content: 'Let me look.',
          tool_calls: [
            { id: weather!.toolCallId, function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
            { id: clock!.toolCallId, function: { name: 'clock', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: weather!.toolCallId, content: 'Sunny in Paris' },
        { role: 'tool', tool_call_id: clock!.toolCallId, content: '2026-12-05T01:30:00.000Z' },
      ],
    });

    // The next prompt on the branch gives the model the whole answer, its calls and results included.
    const next = await prompt(client, threadId, 'Thanks');
    await completion(client, threadId, next.assistantNodeId);
    const messagesOf = (index: number) => (upstream.requests[index]!.body as { messages: unknown[] }).messages;
    expect(messagesOf(2)).toEqual([
      ...messagesOf(1),
      { role: 'assistant', content: 'Hello there!' },
      { role: 'user', content: 'Thanks' },
    ]);
  });

  it('approval: a call that needs it waits; a denial goes to the model, an approval runs it, a pivot interrupts it', async () => {
    let release: (() => void) | undefined;
    const server = await startServer({
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: {
        save_note: {
          inputSchema: z.object({ text: z.string() }),
          needsApproval: true,
          execute: () => new Promise((resolve) => (release = () => resolve('Saved note 1.'))),
        },
      },
    });
    cleanups.push(() => server.close());
    const client = await connect(server);
    const { threadId } = await openThread(client, { patches: true });
    const waiting = (nodeId: string) =>
      client.next(
        'CPP_TOOL_CALL',
        (frame) => frame.payload.nodeId === nodeId && frame.payload.toolCall.state === 'approval-requested',
      );
    const respond = (nodeId: string, toolCallId: string, approved: boolean, id: string, reason?: string) =>
      client.send(
        'CPP_TOOL_APPROVAL',
        { activeThreadId: threadId, nodeId, toolCallId, approved, ...(reason ? { reason } : {}) },
        { id },
      );

    // Denied: the call never runs, and the model is told why.
    const first = await prompt(client, threadId, 'Keep a note: buy milk');
    const asked = (await waiting(first.assistantNodeId)).payload.toolCall;
    expect(asked).toMatchObject({ toolName: 'save_note', input: '{"text":"Keep a note: buy milk"}' });
    respond(first.assistantNodeId, asked.toolCallId, false, 'deny', 'Not now');
    const denied = await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.state === 'output-denied');
    expect(denied.payload.toolCall).toMatchObject({ approval: { approved: false, reason: 'Not now' } });
    const firstEnd = await completion(client, threadId, first.assistantNodeId);
    expect(firstEnd.update.nodes[first.assistantNodeId]?.content).toMatch(
      /You did not approve it, so I kept nothing\.$/,
    );
    // Answered again once its answer has ended: NOT_STREAMING.
    respond(first.assistantNodeId, asked.toolCallId, true, 'late');
    await expectError(client, ErrorCode.NOT_STREAMING, { refId: 'late' });

    // Approved: it runs; an answer to a call no longer waiting is a CONFLICT.
    const second = await prompt(client, threadId, 'Another note: eggs');
    const secondCall = (await waiting(second.assistantNodeId)).payload.toolCall;
    respond(second.assistantNodeId, secondCall.toolCallId, true, 'approve');
    const running = await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.state === 'input-available');
    expect(running.payload.toolCall.approval).toEqual({ approved: true });
    respond(second.assistantNodeId, secondCall.toolCallId, true, 'again');
    await expectError(client, ErrorCode.CONFLICT, { refId: 'again' });
    release?.();
    const secondEnd = await completion(client, threadId, second.assistantNodeId);
    expect(secondEnd.update.nodes[second.assistantNodeId]?.toolCalls?.[0]).toMatchObject({
      state: 'output-available',
      output: 'Saved note 1.',
      approval: { approved: true },
    });

    // A pivot while the call waits is a pivot: the call is kept interrupted.
    const third = await prompt(client, threadId, 'A third note');
    await waiting(third.assistantNodeId);
    const branch = await pivot(client, threadId, third.assistantNodeId, 'Forget it');
    expect(branch.update.nodes[third.assistantNodeId]?.toolCalls?.[0]).toMatchObject({ state: 'interrupted' });
  });

  it('client tools: the client that has the handler answers; a late, foreign or unasked answer is refused', async () => {
    const server = await startServer({
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: demoTools({ now: () => NOW }),
    });
    cleanups.push(() => server.close());
    const asked: unknown[] = [];
    const browser = new CPPClient({
      endpoint: server.url,
      did: 'did:key:z6MkBrowser',
      tools: {
        time_zone: (input) => {
          asked.push(input);
          return 'Europe/Paris';
        },
      },
    });
    cleanups.push(() => browser.close());
    const answer = await browser.prompt({ userPrompt: 'What is my time zone?', model: 'demo-tools' });
    expect(asked).toEqual([{}]);
    expect(answer.content).toBe('Your browser knows your time zone: I ask it. Your time zone is Europe/Paris.');
    expect(answer.toolCalls).toEqual([
      expect.objectContaining({
        toolName: 'time_zone',
        runsOn: 'client',
        state: 'output-available',
        output: 'Europe/Paris',
      }),
    ]);

    // A raw client answers a call it was not asked, then one whose answer has ended.
    const client = await connect(server);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Count for me', { model: 'demo-tools' });
    const clock = (await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.toolName === 'clock')).payload;
    const result = (nodeId: string, toolCallId: string, id: string) =>
      client.send('CPP_TOOL_RESULT', { activeThreadId: threadId, nodeId, toolCallId, output: 'forged' }, { id });
    result(assistantNodeId, clock.toolCall.toolCallId, 'server-tool');
    await expectError(client, ErrorCode.CONFLICT, { refId: 'server-tool' });
    const count = await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.toolName === 'count_to');
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: assistantNodeId });
    await client.next('CPP_STREAM_HALTED');
    result(assistantNodeId, count.payload.toolCall.toolCallId, 'halted');
    await expectError(client, ErrorCode.NOT_STREAMING, { refId: 'halted' });
  });

  it("an answer naming another thread's call is refused: NOT_FOUND for its node, CONFLICT for its call; nothing changes", async () => {
    const server = await startServer({
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: demoTools({ now: () => NOW }),
    });
    cleanups.push(() => server.close());
    const client = await connect(server);
    const zone = await openThread(client, { patches: true });
    const asking = await prompt(client, zone.threadId, 'What is my time zone?');
    const zoneCall = (await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.state === 'input-available'))
      .payload.toolCall;
    const note = await openThread(client, { patches: true });
    const noting = await prompt(client, note.threadId, 'Keep a note: buy milk');
    const noteCall = (
      await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.state === 'approval-requested')
    ).payload.toolCall;

    // The time zone call's answer, sent as the note thread's: its node is not of that thread.
    const answer = { toolCallId: zoneCall.toolCallId, output: 'Europe/Paris' };
    client.send(
      'CPP_TOOL_RESULT',
      { activeThreadId: note.threadId, nodeId: asking.assistantNodeId, ...answer },
      { id: 'r1' },
    );
    await expectError(client, ErrorCode.NOT_FOUND, { refId: 'r1', refType: 'CPP_TOOL_RESULT' });
    // The note thread's streaming node, with the other thread's call: that node has no such call.
    client.send(
      'CPP_TOOL_RESULT',
      { activeThreadId: note.threadId, nodeId: noting.assistantNodeId, ...answer },
      { id: 'r2' },
    );
    await expectError(client, ErrorCode.CONFLICT, { refId: 'r2' });
    const approval = { toolCallId: noteCall.toolCallId, approved: true };
    client.send(
      'CPP_TOOL_APPROVAL',
      { activeThreadId: zone.threadId, nodeId: asking.assistantNodeId, ...approval },
      { id: 'a1' },
    );
    await expectError(client, ErrorCode.CONFLICT, { refId: 'a1' });

    // Both calls still wait, and take their own answers.
    client.send('CPP_SYNC_REQUEST', { threadId: zone.threadId });
    const synced = await client.next('CPP_SYNC_GRAPH', (frame) => frame.payload.threadId === zone.threadId);
    expect(synced.payload.nodes[asking.assistantNodeId]!.toolCalls).toMatchObject([{ state: 'input-available' }]);
    client.send('CPP_TOOL_RESULT', { activeThreadId: zone.threadId, nodeId: asking.assistantNodeId, ...answer });
    expect(
      (await completion(client, zone.threadId, asking.assistantNodeId)).update.nodes[asking.assistantNodeId],
    ).toMatchObject({ toolCalls: [{ state: 'output-available', output: 'Europe/Paris' }] });
    client.send('CPP_TOOL_APPROVAL', { activeThreadId: note.threadId, nodeId: noting.assistantNodeId, ...approval });
    expect(
      (await completion(client, note.threadId, noting.assistantNodeId)).update.nodes[noting.assistantNodeId],
    ).toMatchObject({ toolCalls: [{ state: 'output-available', output: 'Saved note 1.' }] });
  });

  it("a reader of a shared thread may not approve a call nor answer a client tool's: FORBIDDEN, and the call waits", async () => {
    const server = await startServer({
      auth: 'did-key',
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: demoTools({ now: () => NOW }),
    });
    cleanups.push(() => server.close());
    const [alice, bob] = [TestIdentity.generate(), TestIdentity.generate()];
    const owner = await connect(server);
    await authenticate(owner, alice);
    const { threadId } = await openThread(owner, { patches: true });
    owner.send('CPP_MEMBER_ADD', { threadId, did: bob.did, role: 'reader' });
    await owner.next('CPP_MEMBERS');
    const reader = await connect(server);
    await authenticate(reader, bob);
    await openThread(reader, { threadId, patches: true });

    const note = await prompt(owner, threadId, 'Keep a note: buy milk');
    const call = (await reader.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.state === 'approval-requested'))
      .payload.toolCall;
    const target = { activeThreadId: threadId, nodeId: note.assistantNodeId, toolCallId: call.toolCallId };
    reader.send('CPP_TOOL_APPROVAL', { ...target, approved: true }, { id: 'approve' });
    await expectError(reader, ErrorCode.FORBIDDEN, { refId: 'approve', refType: 'CPP_TOOL_APPROVAL' });
    reader.send('CPP_TOOL_RESULT', { ...target, output: 'forged' }, { id: 'answer' });
    await expectError(reader, ErrorCode.FORBIDDEN, { refId: 'answer', refType: 'CPP_TOOL_RESULT' });

    owner.send('CPP_TOOL_APPROVAL', { ...target, approved: false, reason: 'mine to say' });
    const { update } = await completion(owner, threadId, note.assistantNodeId);
    expect(update.nodes[note.assistantNodeId]!.toolCalls).toMatchObject([
      { state: 'output-denied', approval: { approved: false, reason: 'mine to say' } },
    ]);
    // The reader's refused frames changed nothing the owner saw: the call went from waiting to the owner's denial.
    expect(toolCallsOf(owner, note.assistantNodeId).map((toolCall) => toolCall.state)).toEqual([
      'input-streaming',
      'approval-requested',
      'output-denied',
    ]);
  });

  it('client tools: a call no client answers within the call timeout ends in output-error', async () => {
    const server = await startServer({
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: demoTools({ now: () => NOW }),
      toolLimits: { timeoutMs: 200 },
    });
    cleanups.push(() => server.close());
    const client = await connect(server);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'My time zone?', { model: 'demo-tools' });
    const { update } = await completion(client, threadId, assistantNodeId);
    expect(update.nodes[assistantNodeId]?.toolCalls?.[0]).toMatchObject({
      toolName: 'time_zone',
      state: 'output-error',
      errorText: 'No client answered the call within 200 ms: none that runs this tool may be open.',
    });
  });
});
