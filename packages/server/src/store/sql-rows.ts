import {
  AttachmentSchema,
  AnswerContextSchema,
  cutToolCalls,
  type MessageNode,
  type NodeStatus,
  type Role,
  ToolCallSchema,
  TokenUsageSchema,
  type ToolCall,
} from '@promethea/cpp-protocol';
import { z } from 'zod';

/** The rows the SQL stores (SQLite, PostgreSQL) read and write, with column names as aliases of the fields. */

export interface ThreadRow {
  threadId: string;
  ownerDid: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  version: number;
  rootNodeId: string | null;
  headNodeId: string | null;
}

/** The schemas' CHECK constraints keep `role` and `status` within their unions. */
export interface NodeRow {
  nodeId: string;
  threadId: string;
  parentId: string | null;
  role: Role;
  content: string;
  reasoning: string | null;
  status: NodeStatus;
  createdAt: number;
  model: string | null;
  /** JSON of a `TokenUsage`. */
  usage: string | null;
  /** JSON of the node's `ToolCall`s; NULL: none. */
  toolCalls: string | null;
  /** JSON of the node's `Attachment`s. */
  attachments: string | null;
  /** JSON of the answer's `AnswerContext`; NULL: its model read the whole branch. */
  context: string | null;
  /** The proven DID whose prompt a user node is. */
  authorDid: string | null;
}

/** A node left streaming, as recovery reads it. */
export interface StreamingNodeRow {
  nodeId: string;
  threadId: string;
  content: string;
  reasoning: string | null;
  toolCalls: string | null;
}

export function toNodeRow(threadId: string, node: MessageNode): NodeRow {
  return {
    nodeId: node.id,
    threadId,
    parentId: node.parentId,
    role: node.role,
    content: node.content,
    reasoning: node.reasoning ?? null,
    status: node.status,
    createdAt: node.createdAt,
    model: node.model ?? null,
    usage: node.usage === undefined ? null : JSON.stringify(node.usage),
    toolCalls: toolCallsColumn(node.toolCalls),
    attachments: node.attachments === undefined ? null : JSON.stringify(node.attachments),
    context: node.context === undefined ? null : JSON.stringify(node.context),
    authorDid: node.authorDid ?? null,
  };
}

/** A node's tool calls as their column holds them: JSON, or NULL for none. */
export function toolCallsColumn(toolCalls: readonly ToolCall[] | undefined): string | null {
  return toolCalls && toolCalls.length > 0 ? JSON.stringify(toolCalls) : null;
}

const ToolCallsColumnSchema = z.array(ToolCallSchema);

/**
 * The tool calls a node left streaming by a crash keeps (docs/PROTOCOL.md §26.5): those within its recovered text,
 * those still going on interrupted; never run again.
 */
export function recoveredToolCalls(column: string | null, content: string): string | null {
  if (column === null) return null;
  return toolCallsColumn(cutToolCalls(ToolCallsColumnSchema.parse(JSON.parse(column)), content.length));
}

/**
 * A node's columns in the order the SQL stores select them to load a thread: read as arrays, 10,000 rows make
 * 10,000 small arrays instead of as many objects with a property set per column (half the read's time in SQLite).
 */
export type NodeColumns = [
  nodeId: string,
  parentId: string | null,
  role: Role,
  content: string,
  reasoning: string | null,
  status: NodeStatus,
  createdAt: number,
  model: string | null,
  /** JSON of a `TokenUsage`. */
  usage: string | null,
  /** JSON of the node's tool calls. */
  toolCalls: string | null,
  /** JSON of the node's `Attachment`s. */
  attachments: string | null,
  /** JSON of an `AnswerContext`. */
  context: string | null,
  /** The proven DID whose prompt a user node is. */
  authorDid: string | null,
];

/**
 * A stored node as the graph holds it, its `childrenIds` left for `assembleGraph` to fill: one object per row. Optional
 * fields stay absent rather than `undefined`, so a loaded node equals the one that was committed.
 */
export function fromNodeColumns(columns: NodeColumns): MessageNode {
  const node: MessageNode = {
    id: columns[0],
    parentId: columns[1],
    role: columns[2],
    content: columns[3],
    status: columns[5],
    createdAt: columns[6],
    childrenIds: [],
  };
  if (columns[4] !== null) node.reasoning = columns[4];
  if (columns[7] !== null) node.model = columns[7];
  if (columns[8] !== null) node.usage = TokenUsageSchema.parse(JSON.parse(columns[8]));
  if (columns[9] !== null) node.toolCalls = ToolCallsColumnSchema.parse(JSON.parse(columns[9]));
  if (columns[10] !== null) node.attachments = AttachmentSchema.array().parse(JSON.parse(columns[10]));
  if (columns[11] !== null) node.context = AnswerContextSchema.parse(JSON.parse(columns[11]));
  if (columns[12] !== null) node.authorDid = columns[12];
  return node;
}
