import { z } from 'zod';
import { serverFrame } from '../envelope.js';
import { ERROR_CODES } from '../error-codes.js';
import { MessageIdSchema, MessageNodeSchema } from '../node.js';
import { AuthAcceptedFrameSchema, AuthChallengeFrameSchema } from './auth-frames.js';
import { ThreadIdSchema } from './client-frames.js';

const LengthSchema = z.number().int().nonnegative();
const VersionSchema = z.number().int().nonnegative();
const NodeMapSchema = z.record(z.string(), MessageNodeSchema);

/** Why a generation stopped early. */
export const HaltReasonSchema = z.enum(['pivot', 'stop', 'shutdown']);
export type HaltReason = z.infer<typeof HaltReasonSchema>;

/** §3.2.A — the generation of `interruptedNodeId` is over; its content is now exactly `finalContentLength` long. */
export const StreamHaltedFrameSchema = serverFrame(
  'CPP_STREAM_HALTED',
  z.object({
    interruptedNodeId: MessageIdSchema,
    finalContentLength: LengthSchema,
    /** The part of the last chunk that survives the cut (empty when nothing was kept). */
    lastChunkReceived: z.string(),
    threadId: ThreadIdSchema,
    reason: HaltReasonSchema,
  }),
);

/** §3.2.B — the whole tree of one thread. */
export const SyncGraphFrameSchema = serverFrame(
  'CPP_SYNC_GRAPH',
  z.object({
    threadId: ThreadIdSchema,
    /** `null` until the first prompt. */
    rootNodeId: MessageIdSchema.nullable(),
    activeHeadMessageId: MessageIdSchema.nullable(),
    nodes: NodeMapSchema,
    version: VersionSchema,
    title: z.string(),
  }),
);

/** Only the nodes that changed in one structural change, for clients that opted in. */
export const GraphPatchFrameSchema = serverFrame(
  'CPP_GRAPH_PATCH',
  z.object({
    threadId: ThreadIdSchema,
    version: VersionSchema,
    rootNodeId: MessageIdSchema.nullable(),
    activeHeadMessageId: MessageIdSchema.nullable(),
    nodes: NodeMapSchema,
  }),
);

/** Text appended to a streaming node: `offset` is the node's content length before `delta`. */
export const StreamChunkFrameSchema = serverFrame(
  'CPP_STREAM_CHUNK',
  z.object({ threadId: ThreadIdSchema, nodeId: MessageIdSchema, offset: LengthSchema, delta: z.string().min(1) }),
);

export const FinishReasonSchema = z.enum(['stop', 'length', 'content-filter', 'other']);
export type FinishReason = z.infer<typeof FinishReasonSchema>;

/** The generation ran to its end; the node is `completed`. */
export const StreamCompletedFrameSchema = serverFrame(
  'CPP_STREAM_COMPLETED',
  z.object({
    threadId: ThreadIdSchema,
    nodeId: MessageIdSchema,
    finalContentLength: LengthSchema,
    finishReason: FinishReasonSchema,
  }),
);

export const ThreadSummarySchema = z.object({
  threadId: ThreadIdSchema,
  title: z.string(),
  createdAt: z.number().int().nonnegative(),
  updatedAt: z.number().int().nonnegative(),
  version: VersionSchema,
  nodeCount: z.number().int().nonnegative(),
});
export type ThreadSummary = z.infer<typeof ThreadSummarySchema>;

/** The identity's threads, most recently active first. */
export const ThreadsFrameSchema = serverFrame('CPP_THREADS', z.object({ threads: z.array(ThreadSummarySchema) }));

/** One model a server offers. */
export const ModelInfoSchema = z.object({
  /** What `model` names on CPP_PROMPT and CPP_PIVOT_INIT, and what the answers it writes record as `model`. */
  id: z.string(),
  /** For people, e.g. in a model picker. */
  label: z.string(),
  /** The kind of provider that serves it, e.g. `openai-compatible`, `anthropic`, `ollama`, `demo`. */
  provider: z.string(),
  /** Whether it reasons before it answers. */
  reasoning: z.boolean(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

/** The models this server offers, and the one a prompt without `model` gets. */
export const ModelsFrameSchema = serverFrame('CPP_MODELS', z.object({ models: z.array(ModelInfoSchema), defaultModel: z.string() }));

export const ErrorCodeSchema = z.enum(ERROR_CODES as [string, ...string[]]);

/** One operation failed. `refId`/`refType` name the client frame it answers; `threadId`/`nodeId` what it concerns. */
export const ErrorFrameSchema = serverFrame(
  'CPP_ERROR',
  z.object({
    code: ErrorCodeSchema,
    message: z.string(),
    refId: z.string().optional(),
    refType: z.string().optional(),
    threadId: ThreadIdSchema.optional(),
    nodeId: MessageIdSchema.optional(),
  }),
);

export const ServerFrameSchema = z.discriminatedUnion('type', [
  StreamHaltedFrameSchema,
  SyncGraphFrameSchema,
  GraphPatchFrameSchema,
  StreamChunkFrameSchema,
  StreamCompletedFrameSchema,
  ThreadsFrameSchema,
  ModelsFrameSchema,
  ErrorFrameSchema,
  AuthChallengeFrameSchema,
  AuthAcceptedFrameSchema,
]);

export type StreamHaltedFrame = z.infer<typeof StreamHaltedFrameSchema>;
export type SyncGraphFrame = z.infer<typeof SyncGraphFrameSchema>;
export type GraphPatchFrame = z.infer<typeof GraphPatchFrameSchema>;
export type StreamChunkFrame = z.infer<typeof StreamChunkFrameSchema>;
export type StreamCompletedFrame = z.infer<typeof StreamCompletedFrameSchema>;
export type ThreadsFrame = z.infer<typeof ThreadsFrameSchema>;
export type ModelsFrame = z.infer<typeof ModelsFrameSchema>;
export type ErrorFrame = z.infer<typeof ErrorFrameSchema>;
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
export type ServerFrameType = ServerFrame['type'];
export type ServerPayload<Type extends ServerFrameType> = Extract<ServerFrame, { type: Type }>['payload'];

export const SERVER_FRAME_TYPES = ServerFrameSchema.options.map((option) => option.shape.type.value) as readonly ServerFrameType[];
