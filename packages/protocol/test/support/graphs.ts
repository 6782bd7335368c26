import {
  applyChange,
  emptyGraph,
  planFinish,
  planPrompt,
  type ExchangeInput,
  type MessageNode,
  type ThreadGraph,
} from '@promethea/cpp-protocol';

export const THREAD = 'thread_test';

export function exchange(
  userNodeId: string,
  assistantNodeId: string,
  userPrompt = `prompt of ${userNodeId}`,
): ExchangeInput {
  return { userNodeId, assistantNodeId, userPrompt, createdAt: 1000 };
}

/**
 * root user msg_u1 → assistant msg_a1 (completed "Hello!") → user msg_u2 → assistant msg_a2 (streaming "Partial"),
 * head on msg_a2, version 3: built through the tree operations themselves.
 */
export function conversation(): ThreadGraph {
  const graph = emptyGraph(THREAD);
  applyChange(graph, planPrompt(graph, exchange('msg_u1', 'msg_a1')));
  applyChange(graph, planFinish(graph, { nodeId: 'msg_a1', status: 'completed', content: 'Hello!' }));
  applyChange(graph, planPrompt(graph, exchange('msg_u2', 'msg_a2')));
  graph.nodes.msg_a2 = { ...graph.nodes.msg_a2!, content: 'Partial' };
  return graph;
}

/** A node literal with the defaults of a completed leaf. */
export function node(id: string, parentId: string | null, fields: Partial<MessageNode> = {}): MessageNode {
  return { id, parentId, childrenIds: [], role: 'user', content: id, status: 'completed', createdAt: 1, ...fields };
}

/** A sound hand-written graph: msg_r → (msg_a → msg_c), msg_b; head msg_c. */
export function handBuiltGraph(): ThreadGraph {
  return {
    threadId: THREAD,
    rootNodeId: 'msg_r',
    activeHeadMessageId: 'msg_c',
    version: 4,
    nodes: {
      msg_r: node('msg_r', null, { childrenIds: ['msg_a', 'msg_b'] }),
      msg_a: node('msg_a', 'msg_r', { role: 'assistant', childrenIds: ['msg_c'] }),
      msg_b: node('msg_b', 'msg_r', { role: 'assistant', status: 'interrupted' }),
      msg_c: node('msg_c', 'msg_a'),
    },
  };
}
