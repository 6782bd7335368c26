import { ErrorCode, newMessageId, type TreeChange } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startEngine, type EngineHarness } from '../support/engine-harness.js';
import type { CommitMeta } from '../../src/store/conversation-store.js';
import type { ModelMessage, ModelProvider } from '../../src/model/model-provider.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { HeldStore } from '../support/held-store.js';
import { ScriptedModel, type ModelCall } from '../support/scripted-model.js';

// The answer's life (answer.ts) in one engine, in process: no port, no socket. What the generation's state is at
// each step, where the cut falls, and the order clients hear it all in.

/** A store whose next commit fails, once, as a lost database connection would. */
class CommitFailingOnce extends MemoryStore {
  failNext = false;

  override async commit(change: TreeChange, meta: CommitMeta): Promise<void> {
    if (!this.failNext) return super.commit(change, meta);
    this.failNext = false;
    throw new Error('database is locked');
  }
}

/** Prompts and lets `released` chunks of the answer reach the client. */
async function streaming(
  harness: EngineHarness,
  model: ScriptedModel,
  released: number,
): Promise<{ call: ModelCall; userNodeId: string; assistantNodeId: string }> {
  const userNodeId = newMessageId();
  await harness.apply('CPP_PROMPT', { userPrompt: 'Tell me about Go', newNodeId: userNodeId });
  const call = await model.call(model.calls.length - 1);
  call.release(released);
  await call.taken();
  const node = Object.values(harness.engine.graph.nodes).find((each) => each.status === 'streaming')!;
  return { call, userNodeId, assistantNodeId: node.id };
}

describe("an answer's life in the engine", () => {
  it('is held while its change commits, its model call already made; streams once inserted; is idle once its end is committed', async () => {
    const store = new HeldStore();
    const model = new ScriptedModel({ chunks: ['Hello', ' world'] });
    const { engine, client, apply } = await startEngine(model, { store });

    store.hold();
    const prompted = apply('CPP_PROMPT', { userPrompt: 'Hi', newNodeId: newMessageId() });
    const call = await model.call(0);
    expect(engine.generation.state.name).toBe('held');
    expect(client.types()).toEqual([]);
    store.release();
    await prompted;
    expect(engine.generation.state.name).toBe('streaming');
    expect(client.types()).toEqual(['CPP_GRAPH_PATCH']);

    call.releaseAll();
    await client.next('CPP_STREAM_COMPLETED');
    await client.next('CPP_GRAPH_PATCH', (patch) => patch.payload.version === 2);
    expect(engine.generation.state.name).toBe('idle');
    expect(client.types()).toEqual([
      'CPP_GRAPH_PATCH',
      'CPP_STREAM_CHUNK',
      'CPP_STREAM_CHUNK',
      'CPP_STREAM_COMPLETED',
      'CPP_GRAPH_PATCH',
    ]);
  });

  it('pivots: HALTED at the cut at once, then one patch with the cut and the branch, then the new answer streams', async () => {
    const model = new ScriptedModel({ chunks: ['Hello', ' wor', 'ld', ' and more'] });
    const harness = await startEngine(model);
    const { engine, client } = harness;
    const { call, assistantNodeId } = await streaming(harness, model, 3);
    const newBranchNodeId = newMessageId();

    await harness.apply('CPP_PIVOT_INIT', {
      interruptedNodeId: assistantNodeId,
      userPrompt: 'Rust instead',
      newBranchNodeId,
      receivedContentLength: 'Hello wor'.length,
    });
    expect(call.signal.aborted).toBe(true);
    expect(engine.generation.state.name).toBe('streaming');
    expect(engine.generation.stream?.nodeId).not.toBe(assistantNodeId);
    const halted = await client.next('CPP_STREAM_HALTED');
    expect(halted.payload).toMatchObject({ finalContentLength: 9, lastChunkReceived: ' wor', reason: 'pivot' });
    const branch = await client.next('CPP_GRAPH_PATCH', (patch) => newBranchNodeId in patch.payload.nodes);
    expect(branch.payload.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello wor' });
    expect(client.types()).toEqual([
      'CPP_GRAPH_PATCH',
      'CPP_STREAM_CHUNK',
      'CPP_STREAM_CHUNK',
      'CPP_STREAM_CHUNK',
      'CPP_STREAM_HALTED',
      'CPP_GRAPH_PATCH',
    ]);

    const newCall = await model.call(1);
    newCall.release();
    const first = await client.next('CPP_STREAM_CHUNK', (chunk) => chunk.payload.nodeId !== assistantNodeId);
    expect(first.payload).toMatchObject({ offset: 0, delta: 'Hello' });
    newCall.releaseAll();
    await client.next('CPP_STREAM_COMPLETED');
  });

  it('stops: the cut is committed as interrupted after HALTED, and the lock is let go', async () => {
    const model = new ScriptedModel({ chunks: ['One', ' two', ' three'] });
    const harness = await startEngine(model);
    const { assistantNodeId } = await streaming(harness, model, 2);

    await harness.apply('CPP_STREAM_STOP', { nodeId: assistantNodeId, receivedContentLength: 3 });
    expect(harness.engine.generation.state.name).toBe('idle');
    expect(harness.client.types().slice(-2)).toEqual(['CPP_STREAM_HALTED', 'CPP_GRAPH_PATCH']);
    const stored = await harness.store.loadThread(harness.threadId);
    expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'One' });
  });

  it('keeps the cut when the commit of the answer replacing it fails: HALTED told every client where it ends', async () => {
    const store = new CommitFailingOnce();
    const model = new ScriptedModel({ chunks: ['Hello', ' world', '!'] });
    const harness = await startEngine(model, { store });
    const { userNodeId, assistantNodeId } = await streaming(harness, model, 2);

    store.failNext = true;
    const regenerated = harness.apply('CPP_REGENERATE', {
      userNodeId,
      newNodeId: newMessageId(),
      receivedContentLength: 5,
    });
    await expect(regenerated).rejects.toThrow('database is locked');
    expect(harness.client.types().slice(-2)).toEqual(['CPP_STREAM_HALTED', 'CPP_GRAPH_PATCH']);

    expect(harness.engine.generation.state.name).toBe('idle');
    const stored = await harness.store.loadThread(harness.threadId);
    expect(stored!.graph.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Hello' });
  });

  it('refuses a prompt while an answer streams (THREAD_BUSY) and leaves the generation as it was', async () => {
    const model = new ScriptedModel({ chunks: ['Hi'] });
    const harness = await startEngine(model);
    const { call } = await streaming(harness, model, 0);

    await expect(harness.apply('CPP_PROMPT', { userPrompt: 'Again', newNodeId: newMessageId() })).rejects.toMatchObject(
      {
        code: ErrorCode.THREAD_BUSY,
      },
    );
    expect(harness.engine.generation.state.name).toBe('streaming');
    expect(model.calls).toHaveLength(1);
    call.releaseAll();
    await harness.client.next('CPP_STREAM_COMPLETED');
    expect(harness.backgroundErrors).toEqual([]);
  });
});

/**
 * A model whose first call writes text, calls the `look` tool and writes on, once `ready` settles; its next call
 * writes nothing until it is stopped. `requests` holds each call's messages.
 */
function lookingModel(ready: () => Promise<unknown>): ModelProvider & { requests: ModelMessage[][] } {
  const requests: ModelMessage[][] = [];
  return {
    provider: 'scripted',
    model: 'looking-model',
    requests,
    async *stream(request) {
      requests.push(request.messages);
      if (requests.length > 1) {
        await new Promise((resolve) => request.signal.addEventListener('abort', resolve));
        return;
      }
      await ready();
      yield { type: 'text-delta', text: 'Let me look.' };
      yield { type: 'tool-input-start', toolCallId: 'p1', toolName: 'look' };
      yield { type: 'tool-call', toolCallId: 'p1', toolName: 'look', input: '{}' };
      yield { type: 'text-delta', text: ' One moment.' };
      yield { type: 'finish', finishReason: 'stop' };
    },
  };
}

const LOOK = { look: { inputSchema: z.object({}), execute: () => 'a view' } };

describe('a step that called tools', () => {
  it("gives the next step its text, held while the answer's change commits", async () => {
    const store = new HeldStore();
    const model = lookingModel(async () => undefined);
    const { apply } = await startEngine(model, { store, tools: new ToolRegistry(LOOK) });

    store.hold();
    const prompted = apply('CPP_PROMPT', { userPrompt: 'Look', newNodeId: newMessageId() });
    try {
      await expect.poll(() => model.requests.length).toBe(2);
      expect(model.requests[1]?.at(-2)).toMatchObject({ role: 'assistant', content: 'Let me look. One moment.' });
    } finally {
      store.release();
      await prompted;
    }
  });

  it('gives the next step its text, waiting for its chunk', async () => {
    let harness: EngineHarness | undefined;
    const model = lookingModel(() => harness!.client.next('CPP_GRAPH_PATCH'));
    harness = await startEngine(model, { tools: new ToolRegistry(LOOK), chunkIntervalMs: 60_000 });

    await harness.apply('CPP_PROMPT', { userPrompt: 'Look', newNodeId: newMessageId() });
    await expect.poll(() => model.requests.length).toBe(2);
    // ' One moment.' came within the chunk interval: no client has it yet.
    expect(harness.client.all('CPP_STREAM_CHUNK').map((chunk) => chunk.payload.delta)).toEqual(['Let me look.']);
    expect(model.requests[1]?.at(-2)).toMatchObject({ role: 'assistant', content: 'Let me look. One moment.' });
  });
});
