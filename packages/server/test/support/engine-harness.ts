import {
  decodeServerFrame,
  newThreadId,
  type ClientFrame,
  type ServerFrame,
  type ServerFrameType,
} from '@promethea/cpp-protocol';
import { onTestFinished } from 'vitest';
import type { EngineObserver } from '../../src/engine/engine-observer.js';
import type { Identity } from '../../src/engine/identity.js';
import { SolitaryLinks } from '../../src/engine/solitary-link.js';
import { StreamPersister } from '../../src/engine/stream-persister.js';
import type { Subscriber } from '../../src/engine/subscriber.js';
import { ThreadEngine, type ThreadEngineDependencies } from '../../src/engine/thread-engine.js';
import type { ThreadFrame } from '../../src/engine/thread-frame.js';
import { ModelCatalog } from '../../src/model/model-catalog.js';
import type { ModelProvider } from '../../src/model/model-provider.js';
import type { ConversationStore } from '../../src/store/conversation-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { ToolRegistry } from '../../src/tools/tool-registry.js';
import { WAIT_LIMIT_MS } from './eventually.js';

type FrameOf<Type extends ServerFrameType> = Extract<ServerFrame, { type: Type }>;
/** A thread frame's payload without the thread, which the harness fills in. */
type PayloadOf<Type extends ThreadFrame['type']> = Omit<
  Extract<ClientFrame, { type: Type }>['payload'],
  'activeThreadId' | 'threadId'
>;

/**
 * The engine's socket, faked: a subscriber that decodes and keeps every frame the engine sends it, in order, and lets
 * a test wait for the next one it expects. An invalid frame fails the wait.
 */
export class FakeClient implements Subscriber {
  readonly frames: ServerFrame[] = [];
  private waiters: Array<() => void> = [];

  constructor(readonly identity: Identity = { did: 'anonymous', verified: false }) {}

  readonly connectionId = 'connection-in-process';

  send(text: string): void {
    const decoded = decodeServerFrame(text);
    if (!decoded.ok) throw new Error(`the engine sent an invalid frame: ${decoded.message}: ${text}`);
    this.frames.push(decoded.frame);
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** The frames of `type` received so far. */
  all<Type extends ServerFrameType>(type: Type): FrameOf<Type>[] {
    return this.frames.filter((frame): frame is FrameOf<Type> => frame.type === type);
  }

  /** The first frame of `type` matching `predicate`, received already or once it comes. */
  async next<Type extends ServerFrameType>(
    type: Type,
    predicate: (frame: FrameOf<Type>) => boolean = () => true,
  ): Promise<FrameOf<Type>> {
    const deadline = Date.now() + WAIT_LIMIT_MS;
    for (;;) {
      const found = this.all(type).find(predicate);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no ${type} came; received: ${this.types().join(', ')}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, WAIT_LIMIT_MS);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The types of the frames received, in order: what ordering tests compare. */
  types(): string[] {
    return this.frames.map((frame) => frame.type);
  }
}

export interface EngineHarness {
  readonly engine: ThreadEngine;
  readonly store: ConversationStore;
  readonly threadId: string;
  /** Subscribed to the thread with patches, as a connection that asked for them is. */
  readonly client: FakeClient;
  /** Failures no frame answers (`onBackgroundError`): a test that expects none checks this is empty. */
  readonly backgroundErrors: unknown[];
  /** Runs a thread frame as `client` asked for it; settles when the engine has answered it (rejects with its CPPError). */
  apply<Type extends ThreadFrame['type']>(type: Type, payload: PayloadOf<Type>): Promise<void>;
}

/** An observer that watches nothing: a pivot's steps just run. */
const unobserved: EngineObserver = {
  pivotStarted: () => ({ step: (_name, work) => work(), halted: () => undefined, end: () => undefined }),
  generationStarted: () => ({ firstChunk: () => undefined, ended: () => undefined }),
};

/**
 * One thread's engine in the test's process, with no port, no socket and no server around it: a MemoryStore, the
 * links of a server alone, `model` writing every answer (chunks paced at 0 ms: each delta is a chunk) and a
 * `FakeClient` subscribed. `dependencies` replace any of the engine's (limits, hooks, the store). Closed after the test.
 */
export async function startEngine(
  model: ModelProvider,
  dependencies: Partial<ThreadEngineDependencies> = {},
): Promise<EngineHarness> {
  const store = dependencies.store ?? new MemoryStore();
  const backgroundErrors: unknown[] = [];
  const persister = new StreamPersister(store, 60_000, (error) => backgroundErrors.push(error));
  onTestFinished(() => persister.stop());
  const client = new FakeClient();
  const threadId = newThreadId();
  await store.createThread({ threadId, ownerDid: client.identity.did, title: '', createdAt: 0, updatedAt: 0 });
  const { link, stored } = await new SolitaryLinks(store).open(threadId);
  const { graph, ...record } = stored!;
  const engine = new ThreadEngine(record, graph, link, {
    store,
    models: new ModelCatalog([{ provider: model }]),
    chunkIntervalMs: 0,
    persister,
    tools: new ToolRegistry(),
    observer: unobserved,
    limits: { checkPrompt: () => undefined, checkRoom: () => undefined, checkContinue: () => undefined },
    admitGeneration: () => () => undefined,
    pivotListeners: async () => undefined,
    runHooks: async () => undefined,
    onIdle: () => undefined,
    onBackgroundError: (error) => backgroundErrors.push(error),
    ...dependencies,
  });
  link.attach(engine);
  engine.subscribe(client, true);
  onTestFinished(() => engine.shutdown());
  return {
    engine,
    store,
    threadId,
    client,
    backgroundErrors,
    apply: (type, payload) => {
      const thread = type === 'CPP_THREAD_RENAME' ? { threadId } : { activeThreadId: threadId };
      const frame = { type, timestamp: Date.now(), payload: { ...payload, ...thread } } as ThreadFrame;
      return engine.apply(frame, client.identity, client);
    },
  };
}
