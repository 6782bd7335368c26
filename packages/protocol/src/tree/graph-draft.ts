import { CPPError } from '../cpp-error.js';
import { ErrorCode } from '../error-codes.js';
import type { MessageNode } from '../node.js';
import { getNode, topOf, type ThreadGraph } from './thread-graph.js';
import type { TreeChange } from './tree-change.js';

/**
 * A copy-on-write view of a graph that the tree operations edit and check step by step; `toChange()` yields the
 * change without having touched the graph, so a change that fails half-way leaves nothing behind.
 */
export class GraphDraft {
  private readonly changed = new Map<string, MessageNode>();
  private readonly removed = new Set<string>();
  private headId: string | null;

  constructor(private readonly graph: ThreadGraph) {
    this.headId = graph.activeHeadMessageId;
  }

  find(nodeId: string): MessageNode | undefined {
    if (this.removed.has(nodeId)) return undefined;
    return this.changed.get(nodeId) ?? getNode(this.graph, nodeId);
  }

  /** The node, or NOT_FOUND: an id of another thread is as unknown here as one that never existed. */
  get(nodeId: string): MessageNode {
    const node = this.find(nodeId);
    if (!node) throw new CPPError(ErrorCode.NOT_FOUND, `node ${nodeId} is not in thread ${this.graph.threadId}`);
    return node;
  }

  /** Adds a leaf under its `parentId`, or, without a parent, as a first prompt beside any others. */
  insert(node: MessageNode): void {
    if (this.find(node.id)) throw new CPPError(ErrorCode.CONFLICT, `node ${node.id} already exists`);
    if (node.childrenIds.length > 0) throw new Error(`inserted node ${node.id} must be a leaf`);
    if (node.parentId !== null) {
      const parent = this.get(node.parentId);
      this.changed.set(parent.id, { ...parent, childrenIds: [...parent.childrenIds, node.id] });
    }
    this.changed.set(node.id, node);
  }

  /** Empty or undefined `reasoning` leaves the node without reasoning, as a node that never reasoned has none. */
  update(
    nodeId: string,
    fields: Partial<Pick<MessageNode, 'content' | 'reasoning' | 'status' | 'model' | 'usage' | 'toolCalls'>>,
  ): void {
    const node = { ...this.get(nodeId), ...fields };
    if (!node.reasoning) delete node.reasoning;
    if (!node.toolCalls?.length) delete node.toolCalls;
    this.changed.set(nodeId, node);
  }

  /** Removes a node with every node under it, from its parent's children if it has a parent. Returns their ids. */
  removeSubtree(nodeId: string): string[] {
    const node = this.get(nodeId);
    if (node.parentId !== null) {
      const parent = this.get(node.parentId);
      this.changed.set(parent.id, {
        ...parent,
        childrenIds: parent.childrenIds.filter((childId) => childId !== nodeId),
      });
    }
    const subtree: string[] = [];
    const pending = [nodeId];
    for (let id = pending.pop(); id !== undefined; id = pending.pop()) {
      subtree.push(id);
      pending.push(...this.get(id).childrenIds);
    }
    for (const id of subtree) {
      this.changed.delete(id);
      this.removed.add(id);
    }
    return subtree;
  }

  setHead(nodeId: string): void {
    this.get(nodeId);
    this.headId = nodeId;
  }

  get head(): string | null {
    return this.headId;
  }

  /**
   * A node, on the way up to the head's first prompt; the graph's head stands for the graph's root. A draft moves no
   * node, so the first prompt above the graph's head is the one the graph names: the walk up from a prompt's or a
   * pivot's new head ends in a few steps, where it crossed the whole branch on every change.
   */
  private upward(nodeId: string): MessageNode | undefined {
    const { activeHeadMessageId, rootNodeId } = this.graph;
    if (nodeId === activeHeadMessageId && rootNodeId !== null) return this.find(rootNodeId) ?? this.find(nodeId);
    return this.find(nodeId);
  }

  toChange(): TreeChange {
    return {
      threadId: this.graph.threadId,
      baseVersion: this.graph.version,
      version: this.graph.version + 1,
      // The root follows the head (docs/PROTOCOL.md §5): the first prompt of the branch it is on.
      rootNodeId: this.headId === null ? null : (topOf(this.headId, (id) => this.upward(id))?.id ?? null),
      activeHeadMessageId: this.headId,
      nodes: [...this.changed.values()],
      ...(this.removed.size > 0 ? { removedNodeIds: [...this.removed] } : {}),
    };
  }
}
