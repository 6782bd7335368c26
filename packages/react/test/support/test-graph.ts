import { applyChange, emptyGraph, planAnchor, planFinish, planPrompt, type ThreadGraph } from '@promethea/cpp-protocol';

/** Builds thread graphs with the protocol's own tree operations, so test trees obey every invariant. */
export class TestGraph {
  readonly graph: ThreadGraph = emptyGraph('thread_test');

  /** A prompt `msg_u<n>` and its streaming answer `msg_a<n>`, under `parentId` or the head (`null`: a first prompt). */
  prompt(n: number, parentId?: string | null): this {
    const input = { userNodeId: `msg_u${n}`, userPrompt: `prompt ${n}`, assistantNodeId: `msg_a${n}`, createdAt: n };
    applyChange(
      this.graph,
      planPrompt(this.graph, parentId === undefined ? input : { ...input, parentNodeId: parentId }),
    );
    return this;
  }

  /** As `prompt`, answered by several models side by side: `msg_a<n>`, then `msg_a<n>b`, `msg_a<n>c`… (§30). */
  promptSideBySide(n: number, answers: number): this {
    const more = Array.from({ length: answers - 1 }, (_, index) => ({
      assistantNodeId: `msg_a${n}${String.fromCharCode(98 + index)}`,
    }));
    const input = { userNodeId: `msg_u${n}`, userPrompt: `prompt ${n}`, assistantNodeId: `msg_a${n}`, createdAt: n };
    applyChange(this.graph, planPrompt(this.graph, { ...input, moreAnswers: more }));
    return this;
  }

  finish(n: number | string, content = `answer ${n}`): this {
    applyChange(this.graph, planFinish(this.graph, { nodeId: `msg_a${n}`, status: 'completed', content }));
    return this;
  }

  anchor(nodeId: string): this {
    applyChange(this.graph, planAnchor(this.graph, nodeId));
    return this;
  }
}
