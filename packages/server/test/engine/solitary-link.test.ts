import { ErrorCode, newMessageId, newThreadId, type ClientFrame } from '@promethea/cpp-protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { SolitaryLinks } from '../../src/engine/solitary-link.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { StreamPersister } from '../../src/engine/stream-persister.js';
import type { Subscriber } from '../../src/engine/subscriber.js';
import { ThreadEngine } from '../../src/engine/thread-engine.js';
import { ModelCatalog } from '../../src/model/model-catalog.js';
import { Observers } from '../../src/observability/observers.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { ScriptedModel } from '../support/scripted-model.js';

const ANYONE = { did: 'anonymous', verified: false };

describe('the links of a server alone', () => {
  it("give a thread's generation lock to one link at a time", async () => {
    const links = new SolitaryLinks(new MemoryStore());
    const first = (await links.open('thr_a')).link;
    const second = (await links.open('thr_a')).link;
    const otherThread = (await links.open('thr_b')).link;
    expect(await first.claimGeneration()).toBe(true);
    expect(await first.claimGeneration()).toBe(true);
    expect(await second.claimGeneration()).toBe(false);
    expect(await otherThread.claimGeneration()).toBe(true);
    second.releaseGeneration();
    expect(await second.claimGeneration()).toBe(false);
    first.releaseGeneration();
    expect(await second.claimGeneration()).toBe(true);
    await second.close();
    expect(await first.claimGeneration()).toBe(true);
  });

  it('keep two engines of one thread in one process apart: the second neither generates nor takes the live answer for a crash', async () => {
    const store = new MemoryStore();
    const model = new ScriptedModel({ chunks: ['Hi'] });
    const links = new SolitaryLinks(store);
    const persister = new StreamPersister(store, 60_000, () => undefined);
    onTestFinished(() => persister.stop());
    const threadId = newThreadId();
    await store.createThread({ threadId, ownerDid: ANYONE.did, title: '', createdAt: 0, updatedAt: 0 });
    const engine = async () => {
      const { link, stored } = await links.open(threadId);
      const { graph, ...record } = stored!;
      const loaded = new ThreadEngine(record, graph, link, {
        store,
        models: new ModelCatalog([{ provider: model }]),
        chunkIntervalMs: 0,
        persister,
        tools: new ToolRegistry(),
        observer: new Observers(),
        limits: { checkPrompt: () => undefined, checkRoom: () => undefined, checkContinue: () => undefined },
        admitGeneration: () => () => undefined,
        pivotListeners: async () => undefined,
        runHooks: async () => undefined,
        onIdle: () => undefined,
        onBackgroundError: (error) => {
          throw error;
        },
      });
      link.attach(loaded);
      return loaded;
    };
    const sent: string[] = [];
    const client: Subscriber = { send: (text) => sent.push(text) };
    const prompt = (newNodeId: string): Extract<ClientFrame, { type: 'CPP_PROMPT' }> => ({
      type: 'CPP_PROMPT',
      timestamp: 0,
      payload: { activeThreadId: threadId, userPrompt: 'Hello', newNodeId },
    });

    const first = await engine();
    first.subscribe(client);
    await first.apply(prompt(newMessageId()), ANYONE, client);
    const call = await model.call(0);
    const streaming = Object.values(first.graph.nodes).find((node) => node.status === 'streaming')!;

    const second = await engine();
    await expect(second.apply(prompt(newMessageId()), ANYONE, client)).rejects.toMatchObject({
      code: ErrorCode.THREAD_BUSY,
    });
    expect(model.calls).toHaveLength(1);
    expect(call.signal.aborted).toBe(false);
    expect((await store.loadThread(threadId))!.graph.nodes[streaming.id]?.status).toBe('streaming');
    call.releaseAll();
  });
});
