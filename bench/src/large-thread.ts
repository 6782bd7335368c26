import {
  applyChange,
  emptyGraph,
  newMessageId,
  planFinish,
  planPrompt,
  type ThreadGraph,
  type TreeChange,
} from '@promethea/cpp-protocol';

export interface LargeThreadShape {
  /** Nodes in the thread (user and assistant alternate, so an even number). */
  nodes: number;
  /** Average characters of an assistant answer; prompts are a fifth of that. */
  answerChars: number;
}

const PROSE =
  'the conversation branches whenever the user changes direction and every branch keeps the words that were ' +
  'already said so that any earlier point can become the head again and the next prompt grows from there ';

/**
 * A long-lived conversation built with the protocol's own tree operations: mostly a straight dialogue, with every
 * fifth exchange branching from an answer a few turns back, as pivots and anchors do. Deterministic, so that the
 * sync figures of two commits are comparable.
 */
export function buildLargeThread(threadId: string, shape: LargeThreadShape): ThreadGraph {
  const graph = emptyGraph(threadId);
  const answers: string[] = [];
  const createdAt = Date.UTC(2025, 0, 1);
  for (let exchange = 0; exchange * 2 < shape.nodes; exchange += 1) {
    const userNodeId = newMessageId();
    const assistantNodeId = newMessageId();
    const branchFrom = exchange % 5 === 4 && answers.length > 7 ? answers[answers.length - 7] : undefined;
    applyChange(
      graph,
      planPrompt(graph, {
        userNodeId,
        userPrompt: prose(exchange, shape.answerChars / 5),
        assistantNodeId,
        model: 'bench-model',
        createdAt: createdAt + exchange * 60_000,
        ...(branchFrom ? { parentNodeId: branchFrom } : {}),
      }),
    );
    const content = prose(exchange * 7, shape.answerChars * (0.5 + (exchange % 5) / 4));
    applyChange(
      graph,
      planFinish(graph, {
        nodeId: assistantNodeId,
        status: 'completed',
        content,
        usage: { inputTokens: 800, outputTokens: 120 },
      }),
    );
    answers.push(assistantNodeId);
  }
  return graph;
}

/** The whole graph as one change from an empty thread: how a store is seeded in a single transaction. */
export function seedChange(graph: ThreadGraph): TreeChange {
  return {
    threadId: graph.threadId,
    baseVersion: 0,
    version: graph.version,
    rootNodeId: graph.rootNodeId,
    activeHeadMessageId: graph.activeHeadMessageId,
    nodes: Object.values(graph.nodes),
  };
}

function prose(seed: number, length: number): string {
  const start = (seed * 13) % PROSE.length;
  const text = PROSE.slice(start) + PROSE.repeat(Math.ceil(length / PROSE.length) + 1);
  return text.slice(0, Math.max(1, Math.round(length))).trim() || 'hello';
}
