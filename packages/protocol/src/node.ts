import { z } from 'zod';
import { MESSAGE_ID_PATTERN } from './ids.js';
import { TEXT_PARTS } from './tree/text-parts.js';

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

/** One message of the conversation tree (the spec's Directed Semantic Graph). */
export const MessageNodeSchema = z.object({
  id: MessageIdSchema,
  parentId: MessageIdSchema.nullable(),
  childrenIds: z.array(MessageIdSchema),
  role: RoleSchema,
  content: z.string(),
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
  /** Token usage of the generation, when the provider reports it. */
  usage: TokenUsageSchema.optional(),
});
export type MessageNode = z.infer<typeof MessageNodeSchema>;

/** A part a chunk streams into: one of `TEXT_PARTS`. */
export const TextPartSchema = z.enum(TEXT_PARTS);
