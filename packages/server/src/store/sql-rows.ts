import { TokenUsageSchema, type MessageNode, type NodeStatus, type Role } from '@promethea/cpp-protocol';
import type { NodeRecord } from './graph-records.js';

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
}

/** A node left streaming, as recovery reads it. */
export interface StreamingNodeRow {
  nodeId: string;
  threadId: string;
  content: string;
  reasoning: string | null;
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
  };
}

/** Optional fields stay absent rather than `undefined`, so a loaded node equals the one that was committed. */
export function fromNodeRow(row: NodeRow): NodeRecord {
  const record: NodeRecord = {
    id: row.nodeId,
    parentId: row.parentId,
    role: row.role,
    content: row.content,
    status: row.status,
    createdAt: row.createdAt,
  };
  if (row.reasoning !== null) record.reasoning = row.reasoning;
  if (row.model !== null) record.model = row.model;
  if (row.usage !== null) record.usage = TokenUsageSchema.parse(JSON.parse(row.usage));
  return record;
}
