import { z } from 'zod';
import { AttachmentMediaTypeSchema } from '../attachment.js';
import { serverFrame } from '../envelope.js';
import { ERROR_CODES } from '../error-codes.js';
import {
  ChunkPartSchema,
  MessageIdSchema,
  MessageNodeSchema,
  TextPartSchema,
  ToolCallIdSchema,
  ToolCallSchema,
} from '../node.js';
import { AuthAcceptedFrameSchema, AuthChallengeFrameSchema } from './auth-frames.js';
import {
  InviteIdSchema,
  InviteTokenSchema,
  MemberRoleSchema,
  ShareLinkIdSchema,
  ShareScopeSchema,
  ShareTokenSchema,
  ThreadIdSchema,
} from './client-frames.js';

const LengthSchema = z.number().int().nonnegative();
const VersionSchema = z.number().int().nonnegative();
const NodeMapSchema = z.record(z.string(), MessageNodeSchema);

/** Why a generation stopped early. */
export const HaltReasonSchema = z.enum(['pivot', 'stop', 'shutdown', 'regenerate']);
export type HaltReason = z.infer<typeof HaltReasonSchema>;

/**
 * §3.2.A — the generation of `interruptedNodeId` is over; its content is now exactly `finalContentLength` long, and its
 * reasoning `finalReasoningLength` (absent: the node has no reasoning).
 */
export const StreamHaltedFrameSchema = serverFrame(
  'CPP_STREAM_HALTED',
  z.object({
    interruptedNodeId: MessageIdSchema,
    finalContentLength: LengthSchema,
    /** The part of the last chunk of the cut part that survives the cut (empty when nothing was kept). */
    lastChunkReceived: z.string(),
    threadId: ThreadIdSchema,
    reason: HaltReasonSchema,
    finalReasoningLength: LengthSchema.optional(),
    /** The part the cut fell in: `reasoning` when none of the answer was kept; absent: `content`. */
    part: TextPartSchema.optional(),
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
    /** The nodes the change removed (a deleted branch); absent when it removed none. */
    removedNodeIds: z.array(MessageIdSchema).optional(),
    /** The thread's title after the change (a rename, or the first prompt, changes it); absent: unchanged. */
    title: z.string().optional(),
  }),
);

/**
 * Text appended to one part of a streaming node (absent `part`: its content): `offset` is that part's length before
 * `delta`. A `tool-input` chunk extends the input of the node's tool call `toolCallId`.
 */
export const StreamChunkFrameSchema = serverFrame(
  'CPP_STREAM_CHUNK',
  z.object({
    threadId: ThreadIdSchema,
    nodeId: MessageIdSchema,
    offset: LengthSchema,
    delta: z.string().min(1),
    part: ChunkPartSchema.optional(),
    /** With `part: "tool-input"` only: the call whose input `delta` extends. */
    toolCallId: ToolCallIdSchema.optional(),
  }),
);

/**
 * A tool call of a streaming node began or changed state (or reported progress): the whole call as it is now. Like a
 * chunk, it does not change the thread's version; the node's structural update after its end carries its calls.
 */
export const ToolCallFrameSchema = serverFrame(
  'CPP_TOOL_CALL',
  z.object({ threadId: ThreadIdSchema, nodeId: MessageIdSchema, toolCall: ToolCallSchema }),
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
  /** Present on a thread of another identity that this one is a member of: its role there. Absent: its own thread. */
  role: MemberRoleSchema.optional(),
});
export type ThreadSummary = z.infer<typeof ThreadSummarySchema>;

/** A page of the identity's threads, most recently active first; `nextCursor` asks for the next (null: no more). */
export const ThreadsFrameSchema = serverFrame(
  'CPP_THREADS',
  z.object({ threads: z.array(ThreadSummarySchema), nextCursor: z.string().nullable() }),
);

/** A thread of the identity was created or changed: its summary now, for a connection subscribed to the list. */
export const ThreadUpdatedFrameSchema = serverFrame('CPP_THREAD_UPDATED', z.object({ thread: ThreadSummarySchema }));

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
  /** The tokens the model reads and writes in one call; a longer branch is fitted to it (docs/PROTOCOL.md §28). */
  contextWindow: z.number().int().positive().optional(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;

/** The models this server offers, and the one a prompt without `model` gets. */
export const ModelsFrameSchema = serverFrame(
  'CPP_MODELS',
  z.object({ models: z.array(ModelInfoSchema), defaultModel: z.string() }),
);

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

/** The thread no longer exists: every subscriber is told, and unsubscribed. */
export const ThreadDeletedFrameSchema = serverFrame('CPP_THREAD_DELETED', z.object({ threadId: ThreadIdSchema }));

/** One match of a search: a thread's title (`nodeId` null) or the text of one of its messages. */
export const SearchHitSchema = z.object({
  threadId: ThreadIdSchema,
  title: z.string(),
  nodeId: MessageIdSchema.nullable(),
  /** The matching words with a little of the text around them, or the title. */
  snippet: z.string(),
});
export type SearchHit = z.infer<typeof SearchHitSchema>;

/** The matches of a CPP_THREAD_SEARCH: titles, then messages, the one stored last first. */
export const SearchResultsFrameSchema = serverFrame(
  'CPP_SEARCH_RESULTS',
  z.object({ query: z.string(), hits: z.array(SearchHitSchema) }),
);

/** The threads a CPP_THREAD_IMPORT created, in the document's order. */
export const ThreadsImportedFrameSchema = serverFrame(
  'CPP_THREADS_IMPORTED',
  z.object({ threads: z.array(ThreadSummarySchema) }),
);

/**
 * A ticket to the attachment endpoints (docs/PROTOCOL.md §27.2): they act for this connection's identity, as it is
 * now, while the ticket lasts. The limits are what an upload is held to.
 */
export const AttachmentTicketFrameSchema = serverFrame(
  'CPP_ATTACHMENT_TICKET',
  z.object({
    /** Sent as `Authorization: Bearer <ticket>`, or as the `ticket` query parameter where no header can be set. */
    ticket: z.string().min(1),
    /** Milliseconds since the Unix epoch; after it the endpoints answer 401. */
    expiresAt: z.number().int().nonnegative(),
    /** The path uploads are sent to, and below which each attachment is served (`<uploadPath>/<attachmentId>`). */
    uploadPath: z.string().regex(/^\//, 'an absolute path'),
    /** The largest file taken, in bytes. */
    maxBytes: z.number().int().positive(),
    /** The most files one prompt may carry. */
    maxPerPrompt: z.number().int().positive(),
    /** The types taken, as sniffed from the bytes. */
    mediaTypes: z.array(AttachmentMediaTypeSchema),
  }),
);

/** A member of a thread: an identity and what it may do there. */
export const ThreadMemberSchema = z.object({ did: z.string(), role: MemberRoleSchema });
export type ThreadMember = z.infer<typeof ThreadMemberSchema>;

/** Who shares a thread: its owner and its members, in the order they were first added. */
export const MembersFrameSchema = serverFrame(
  'CPP_MEMBERS',
  z.object({ threadId: ThreadIdSchema, ownerDid: z.string(), members: z.array(ThreadMemberSchema) }),
);

/** Why an identity lost a thread it was a member of. */
export const RevokeReasonSchema = z.enum(['removed', 'left']);
export type RevokeReason = z.infer<typeof RevokeReasonSchema>;

/**
 * `did` is no longer a member of the thread: each of its connections that was subscribed is told, and unsubscribed.
 * From now on the thread is, to that identity, a thread that does not exist.
 */
export const ThreadRevokedFrameSchema = serverFrame(
  'CPP_THREAD_REVOKED',
  z.object({ threadId: ThreadIdSchema, did: z.string(), reason: RevokeReasonSchema }),
);

/** An invite as its owner sees it: never its token, which only CPP_INVITE carries, once. */
export const InviteSummarySchema = z.object({
  inviteId: InviteIdSchema,
  role: MemberRoleSchema,
  /** Milliseconds since the Unix epoch; from then on the token joins nobody. */
  expiresAt: z.number().int().nonnegative(),
  maxUses: z.number().int().positive(),
  uses: z.number().int().nonnegative(),
});
export type InviteSummary = z.infer<typeof InviteSummarySchema>;

/** A new invite with its token: the only time the server tells the token. */
export const InviteFrameSchema = serverFrame(
  'CPP_INVITE',
  z.object({ threadId: ThreadIdSchema, token: InviteTokenSchema, invite: InviteSummarySchema }),
);

/** The thread's invites that can still be used. */
export const InvitesFrameSchema = serverFrame(
  'CPP_INVITES',
  z.object({ threadId: ThreadIdSchema, invites: z.array(InviteSummarySchema) }),
);

/** An identity that has a thread open, and whether it is typing a prompt there. */
export const PresentIdentitySchema = z.object({ did: z.string(), typing: z.boolean() });
export type PresentIdentity = z.infer<typeof PresentIdentitySchema>;

/**
 * Who has the thread open now, on every server, each identity once, sorted by DID (the receiver among them): sent to
 * the connections that asked for it when they open the thread and whenever it changes (docs/PROTOCOL.md §29.9).
 */
export const PresenceFrameSchema = serverFrame(
  'CPP_PRESENCE',
  z.object({ threadId: ThreadIdSchema, present: z.array(PresentIdentitySchema) }),
);

/** A share link as its owner sees it: never its token, which only CPP_SHARE_LINK carries, once. */
export const ShareLinkSummarySchema = z.object({
  linkId: ShareLinkIdSchema,
  scope: ShareScopeSchema,
  /** Milliseconds since the Unix epoch: when the snapshot was taken. */
  createdAt: z.number().int().nonnegative(),
});
export type ShareLinkSummary = z.infer<typeof ShareLinkSummarySchema>;

/** A new share link with its token and the path its page is served at: the only time the server tells them. */
export const ShareLinkFrameSchema = serverFrame(
  'CPP_SHARE_LINK',
  z.object({
    threadId: ThreadIdSchema,
    token: ShareTokenSchema,
    /** The page's path on the server's origin: `/share/` and the token. */
    path: z.string().regex(/^\/share\/cppshr_[A-Za-z0-9_-]{43}$/, 'expected /share/ and a share token'),
    link: ShareLinkSummarySchema,
  }),
);

/** The owner's share links of the thread, oldest first. */
export const ShareLinksFrameSchema = serverFrame(
  'CPP_SHARE_LINKS',
  z.object({ threadId: ThreadIdSchema, links: z.array(ShareLinkSummarySchema) }),
);

export const ServerFrameSchema = z.discriminatedUnion('type', [
  StreamHaltedFrameSchema,
  SyncGraphFrameSchema,
  GraphPatchFrameSchema,
  StreamChunkFrameSchema,
  StreamCompletedFrameSchema,
  ToolCallFrameSchema,
  ThreadsFrameSchema,
  ModelsFrameSchema,
  ErrorFrameSchema,
  AuthChallengeFrameSchema,
  AuthAcceptedFrameSchema,
  ThreadDeletedFrameSchema,
  SearchResultsFrameSchema,
  ThreadsImportedFrameSchema,
  ThreadUpdatedFrameSchema,
  AttachmentTicketFrameSchema,
  MembersFrameSchema,
  ThreadRevokedFrameSchema,
  InviteFrameSchema,
  InvitesFrameSchema,
  PresenceFrameSchema,
  ShareLinkFrameSchema,
  ShareLinksFrameSchema,
]);

export type StreamHaltedFrame = z.infer<typeof StreamHaltedFrameSchema>;
export type SyncGraphFrame = z.infer<typeof SyncGraphFrameSchema>;
export type GraphPatchFrame = z.infer<typeof GraphPatchFrameSchema>;
export type StreamChunkFrame = z.infer<typeof StreamChunkFrameSchema>;
export type StreamCompletedFrame = z.infer<typeof StreamCompletedFrameSchema>;
export type ToolCallFrame = z.infer<typeof ToolCallFrameSchema>;
export type ThreadsFrame = z.infer<typeof ThreadsFrameSchema>;
export type ModelsFrame = z.infer<typeof ModelsFrameSchema>;
export type ErrorFrame = z.infer<typeof ErrorFrameSchema>;
export type ThreadDeletedFrame = z.infer<typeof ThreadDeletedFrameSchema>;
export type SearchResultsFrame = z.infer<typeof SearchResultsFrameSchema>;
export type ThreadsImportedFrame = z.infer<typeof ThreadsImportedFrameSchema>;
export type ThreadUpdatedFrame = z.infer<typeof ThreadUpdatedFrameSchema>;
export type AttachmentTicketFrame = z.infer<typeof AttachmentTicketFrameSchema>;
export type MembersFrame = z.infer<typeof MembersFrameSchema>;
export type ThreadRevokedFrame = z.infer<typeof ThreadRevokedFrameSchema>;
export type PresenceFrame = z.infer<typeof PresenceFrameSchema>;
export type ServerFrame = z.infer<typeof ServerFrameSchema>;
export type ServerFrameType = ServerFrame['type'];
export type ServerPayload<Type extends ServerFrameType> = Extract<ServerFrame, { type: Type }>['payload'];
