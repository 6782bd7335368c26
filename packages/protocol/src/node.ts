import { z } from 'zod';
import { AttachmentSchema } from './attachment.js';
import { MESSAGE_ID_PATTERN, TOOL_CALL_ID_PATTERN } from './ids.js';
import { TEXT_PARTS } from './tree/text-parts.js';
import { TOOL_CALL_STATES, type ToolCall } from './tree/tool-calls.js';

export const MessageIdSchema = z
  .string()
  .regex(MESSAGE_ID_PATTERN, 'expected a message id: msg_ followed by 1-100 of [A-Za-z0-9_-]');

export const RoleSchema = z.enum(['user', 'assistant']);
export type Role = z.infer<typeof RoleSchema>;

/** `streaming` only while a generation writes the node; user nodes are always `completed`. */
export const NodeStatusSchema = z.enum(['streaming', 'completed', 'interrupted', 'failed']);
export type NodeStatus = z.infer<typeof NodeStatusSchema>;

export const TokenUsageSchema = z.object({
  inputTokens: z.number().int().nonnegative().optional(),
  outputTokens: z.number().int().nonnegative().optional(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

export const ToolCallIdSchema = z
  .string()
  .regex(TOOL_CALL_ID_PATTERN, 'expected a tool call id: call_ followed by 1-100 of [A-Za-z0-9_-]');

export const ToolCallStateSchema = z.enum(TOOL_CALL_STATES);

export const ToolProgressSchema = z.object({
  progress: z.number().nonnegative(),
  total: z.number().nonnegative().optional(),
  message: z.string().optional(),
});

export const ToolApprovalSchema = z.object({ approved: z.boolean(), reason: z.string().optional() });

/** One tool call of an assistant node: see `ToolCall` (tree/tool-calls.ts) for its fields. */
export const ToolCallSchema = z.object({
  toolCallId: ToolCallIdSchema,
  toolName: z.string().min(1).max(128),
  step: z.number().int().nonnegative(),
  offset: z.number().int().nonnegative(),
  state: ToolCallStateSchema,
  input: z.string(),
  output: z.string().optional(),
  errorText: z.string().optional(),
  progress: ToolProgressSchema.optional(),
  approval: ToolApprovalSchema.optional(),
  runsOn: z.literal('client').optional(),
});
// The schema and the interface the zod-free modules use are one shape.
const toolCallShapes: [ToolCall, z.infer<typeof ToolCallSchema>] = [] as unknown as [
  z.infer<typeof ToolCallSchema>,
  ToolCall,
];
void toolCallShapes;

/**
 * What an answer's model read of its branch, when it did not read all of it (docs/PROTOCOL.md §28.3): the branch's
 * first prompt, then the path from `fromNodeId` on; the `omittedNodes` nodes between were left out to fit the model's
 * context window.
 */
export const AnswerContextSchema = z.object({
  fromNodeId: MessageIdSchema,
  omittedNodes: z.number().int().positive(),
  /**
   * The summary of the nodes left out that the model read in their place, when its server fits a branch by
   * summarising (docs/PROTOCOL.md §28.5); absent when they were dropped.
   */
  summary: z.string().optional(),
});
export type AnswerContext = z.infer<typeof AnswerContextSchema>;

/** One message of the conversation tree (the spec's Directed Semantic Graph). */
export const MessageNodeSchema = z.object({
  id: MessageIdSchema,
  parentId: MessageIdSchema.nullable(),
  childrenIds: z.array(MessageIdSchema),
  role: RoleSchema,
  content: z.string(),
  /** On user nodes: the files the prompt carried, in the order it named them (docs/PROTOCOL.md §27). */
  attachments: z.array(AttachmentSchema).optional(),
  /**
   * What the model reasoned before (or between) its answer's text, streamed apart from `content` and never sent back
   * to a model as answer text. Absent when the model did not reason.
   */
  reasoning: z.string().optional(),
  status: NodeStatusSchema,
  /** Milliseconds since the Unix epoch. */
  createdAt: z.number().int().nonnegative(),
  /** The model that wrote an assistant node. */
  model: z.string().optional(),
  /** The proven DID whose prompt a user node is (docs/PROTOCOL.md §29.5); absent when the identity was not proven. */
  authorDid: z.string().optional(),
  /** Token usage of the generation, when the provider reports it. */
  usage: TokenUsageSchema.optional(),
  /** The tools the answer called, in the order it called them; absent when it called none. */
  toolCalls: z.array(ToolCallSchema).optional(),
  /** On an answer whose model did not read the whole path: where what it read resumed. Absent: it read all of it. */
  context: AnswerContextSchema.optional(),
});
export type MessageNode = z.infer<typeof MessageNodeSchema>;

/** A part a chunk streams into: one of `TEXT_PARTS`. */
export const TextPartSchema = z.enum(TEXT_PARTS);

/** What a chunk extends: one of the node's texts, or the input of one of its tool calls. */
export const ChunkPartSchema = z.enum([...TEXT_PARTS, 'tool-input']);
