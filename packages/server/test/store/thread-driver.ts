import {
  type AnswerContext,
  type Attachment,
  TEXT_PARTS,
  applyChange,
  emptyGraph,
  findInvariantViolations,
  newMessageId,
  newThreadId,
  partText,
  planAnchor,
  planContinue,
  planBranchDelete,
  planFinish,
  planPivotSplice,
  planPrompt,
  planRegenerate,
  setPartText,
  type FinishInput,
  type TextPart,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';
import { expect } from 'vitest';
import type { ConversationStore, StoredThread, ThreadRecord } from '../../src/store/conversation-store.js';
import { spellStreamedText } from '../../src/store/streamed-text.js';

/** Hands out strictly increasing timestamps, so that "most recently updated" is never a tie by accident. */
export class TestClock {
  private current = 1_700_000_000_000;

  now(): number {
    this.current += 1;
    return this.current;
  }
}

export interface ExchangeIds {
  userNodeId: string;
  assistantNodeId: string;
}

export interface PromptOptions extends Partial<ExchangeIds> {
  parentNodeId?: string;
  model?: string;
  attachments?: Attachment[];
  /** What the answer's model read, as the engine records it on the answer it creates. */
  context?: AnswerContext;
  authorDid?: string;
}

/**
 * Plays a thread the way the engine will: plans each change with the protocol's tree operations, commits it to the
 * store and applies it to its own in-memory graph, which is what the store must give back.
 */
export class ThreadDriver {
  readonly graph: ThreadGraph;
  /** Each streaming node's committed text of a part and the pieces saved over it, by offset; keyed `nodeId part`. */
  private readonly streamed = new Map<string, { base: string; pieces: Map<number, string> }>();

  private constructor(
    private readonly store: ConversationStore,
    private readonly clock: TestClock,
    readonly record: ThreadRecord,
  ) {
    this.graph = emptyGraph(record.threadId);
  }

  static async create(
    store: ConversationStore,
    clock: TestClock,
    ownerDid = 'did:example:alice',
  ): Promise<ThreadDriver> {
    const now = clock.now();
    const record: ThreadRecord = { threadId: newThreadId(), ownerDid, title: '', createdAt: now, updatedAt: now };
    await store.createThread({ ...record });
    return new ThreadDriver(store, clock, record);
  }

  get threadId(): string {
    return this.record.threadId;
  }

  async prompt(text: string, { context, ...options }: PromptOptions = {}): Promise<ExchangeIds> {
    const ids = this.exchangeIds(options);
    const isFirst = this.graph.rootNodeId === null;
    const change = planPrompt(this.graph, { ...options, ...ids, userPrompt: text, createdAt: this.clock.now() });
    if (context)
      change.nodes = change.nodes.map((node) => (node.id === ids.assistantNodeId ? { ...node, context } : node));
    await this.commit(change, isFirst ? text : undefined);
    return ids;
  }

  /** `cutContent` undefined: the node had already finished, and the prompt simply branches under it. */
  async pivot(
    interruptedNodeId: string,
    cutContent: string | undefined,
    text: string,
    options: Partial<ExchangeIds> = {},
  ): Promise<ExchangeIds> {
    const ids = this.exchangeIds(options);
    const input = { ...ids, interruptedNodeId, userPrompt: text, createdAt: this.clock.now() };
    await this.commit(planPivotSplice(this.graph, cutContent === undefined ? input : { ...input, cutContent }));
    return ids;
  }

  async anchor(nodeId: string): Promise<void> {
    await this.commit(planAnchor(this.graph, nodeId));
  }

  /** `halted`: an answer of the user node that was streaming, kept with this text. */
  async regenerate(userNodeId: string, halted?: { nodeId: string; content: string }): Promise<string> {
    const assistantNodeId = newMessageId();
    await this.commit(
      planRegenerate(this.graph, {
        userNodeId,
        assistantNodeId,
        createdAt: this.clock.now(),
        ...(halted ? { halted: [halted] } : {}),
      }),
    );
    return assistantNodeId;
  }

  async deleteBranch(nodeId: string): Promise<void> {
    await this.commit(planBranchDelete(this.graph, nodeId));
  }

  async finish(input: FinishInput): Promise<void> {
    await this.commit(planFinish(this.graph, input));
  }

  /** An interrupted or failed answer streams again (CPP_CONTINUE). */
  async continue(nodeId: string, model?: string): Promise<void> {
    await this.commit(planContinue(this.graph, model === undefined ? { nodeId } : { nodeId, model }));
  }

  /** Saves streamed text of a part, alone in its batch, as a server does: what follows the part's text saved so far. */
  async stream(nodeId: string, text: string, part: TextPart = 'content'): Promise<void> {
    const node = this.graph.nodes[nodeId];
    const saved = node ? partText(node, part) : '';
    const offset = text.startsWith(saved) ? saved.length : 0;
    await streamBatch(this.store, [{ driver: this, nodeId, part, offset, text: text.slice(offset) }]);
  }

  /** The in-memory graph follows streamed text only while the node streams, as the store must. */
  followStream(nodeId: string, part: TextPart, offset: number, text: string): void {
    const node = this.graph.nodes[nodeId];
    if (node?.status !== 'streaming') return;
    const key = `${nodeId} ${part}`;
    const streamed = this.streamed.get(key) ?? { base: partText(node, part), pieces: new Map<number, string>() };
    streamed.pieces.set(offset, text);
    this.streamed.set(key, streamed);
    setPartText(
      node,
      part,
      spellStreamedText(
        streamed.base,
        [...streamed.pieces].map(([at, piece]) => ({ offset: at, text: piece })),
      ),
    );
  }

  /** The stored thread as it must be: the in-memory graph and the record the commits produced. */
  expected(): StoredThread {
    return { ...this.record, graph: structuredClone(this.graph) };
  }

  async expectStoreToMatch(store: ConversationStore = this.store): Promise<void> {
    expect(await loadSound(store, this.threadId)).toStrictEqual(this.expected());
  }

  private async commit(change: TreeChange, title?: string): Promise<void> {
    const updatedAt = this.clock.now();
    await this.store.commit(change, title === undefined ? { updatedAt } : { updatedAt, title });
    applyChange(this.graph, structuredClone(change));
    // A node that ended lost its pieces with the commit; one that streams again starts from what was committed.
    for (const node of change.nodes) for (const part of TEXT_PARTS) this.streamed.delete(`${node.id} ${part}`);
    this.record.updatedAt = updatedAt;
    if (title !== undefined) this.record.title = title;
  }

  private exchangeIds(options: Partial<ExchangeIds>): ExchangeIds {
    return {
      userNodeId: options.userNodeId ?? newMessageId(),
      assistantNodeId: options.assistantNodeId ?? newMessageId(),
    };
  }
}

export interface StreamedPiece {
  driver: ThreadDriver;
  nodeId: string;
  /** Absent: the content. */
  part?: TextPart;
  offset: number;
  text: string;
}

/** Saves streamed text of nodes of any threads in one batch, in order; each thread's driver follows it. */
export async function streamBatch(store: ConversationStore, entries: readonly StreamedPiece[]): Promise<void> {
  await store.saveStreamedText(
    entries.map(({ driver, nodeId, part, offset, text }) => ({
      threadId: driver.threadId,
      nodeId,
      offset,
      text,
      ...(part ? { part } : {}),
    })),
  );
  for (const { driver, nodeId, part = 'content', offset, text } of entries)
    driver.followStream(nodeId, part, offset, text);
}

/** Loads a thread that must exist and whose graph must be sound. */
export async function loadSound(store: ConversationStore, threadId: string): Promise<StoredThread> {
  const stored = await store.loadThread(threadId);
  if (!stored) throw new Error(`thread ${threadId} was not found`);
  expect(findInvariantViolations(stored.graph)).toEqual([]);
  return stored;
}
