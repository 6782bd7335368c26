import { z } from 'zod';
import { AttachmentIdsSchema } from '../attachment.js';
import { clientFrame } from '../envelope.js';
import { DID_MAX_LENGTH, DID_PATTERN } from '../identity/did.js';
import { THREAD_ID_PATTERN } from '../ids.js';
import { MessageIdSchema, ToolCallIdSchema } from '../node.js';
import { SEARCH_QUERY_MAX_LENGTH, SEARCH_RESULTS_MAX } from '../threads/search-terms.js';
import { THREAD_LIST_CURSOR_MAX_LENGTH, THREAD_LIST_MAX_LIMIT } from '../threads/thread-list-page.js';
import { AuthProofFrameSchema } from './auth-frames.js';

export const ThreadIdSchema = z
  .string()
  .regex(THREAD_ID_PATTERN, 'expected a thread id: thread_ followed by 1-100 of [A-Za-z0-9_-]');

/**
 * A prompt's text. U+0000 is refused because some stores (PostgreSQL text) cannot hold it. That it says something
 * is a rule of the whole payload (`saysSomething`): a prompt of files alone may have no text.
 */
export const UserPromptSchema = z
  .string()
  .regex(/^[^\u0000]*$/, 'a prompt may not contain the NUL character (U+0000)')
  // Stores hold text as UTF-8, which has no lone surrogate: SQLite would keep U+FFFD instead, and lengths would change.
  .regex(/^\P{Surrogate}*$/u, 'a prompt may not contain a lone surrogate (half of a UTF-16 pair)');

/**
 * A prompt must say something (docs/PROTOCOL.md §6.5): a character of its text that is not white space, or a file.
 * The JSON Schema says the same as `anyOf`, so that a validator of the published schemas refuses what the server does.
 */
function saysSomething<Payload extends z.ZodObject<{ userPrompt: typeof UserPromptSchema }>>(payload: Payload) {
  return payload
    .refine(
      (prompt) => /\S/.test(prompt.userPrompt) || (prompt as { attachments?: unknown }).attachments !== undefined,
      { message: 'expected a prompt with at least one non-space character, or attachments', path: ['userPrompt'] },
    )
    .meta({
      anyOf: [
        { properties: { userPrompt: { type: 'string', pattern: '\\S' } } },
        // Ajv's strict mode wants each required property defined beside `required`.
        { properties: { attachments: { type: 'array' } }, required: ['attachments'] },
      ],
    });
}

/** The thread version the client last saw; a mismatch is refused with CONFLICT instead of acting on a stale view. */
const ExpectedVersionSchema = z.number().int().nonnegative();

/** A count of UTF-16 code units the client had shown of a streaming node. */
const ContentLengthSchema = z.number().int().nonnegative();

/** A count of UTF-16 code units the client had shown of a streaming node's reasoning. */
const ReasoningLengthSchema = z.number().int().nonnegative();

/**
 * JSON Schema's maxLength counts code points where CPP counts UTF-16 code units (docs/PROTOCOL.md §3.3): the
 * published schema's bound is then the looser one, and this description says which is meant.
 */
const utf16Length = (max: number) => `at most ${max} UTF-16 code units (maxLength, in code points, is looser)`;

/** One of the ids `CPP_MODELS` lists; absent: the server's default model. */
export const ModelIdSchema = z
  .string()
  .min(1)
  .max(200)
  .meta({ description: `1 to ${utf16Length(200)}` });

/** The most models one prompt may ask to answer side by side (docs/PROTOCOL.md §30.1). */
export const MODELS_PER_PROMPT_MAX = 4;

/**
 * The models that answer one prompt side by side, each in a sibling answer, in this order (docs/PROTOCOL.md §30):
 * 1–4 distinct ids of `CPP_MODELS`. Exclusive with `model`.
 */
export const ModelIdsSchema = z
  .array(ModelIdSchema)
  .min(1)
  .max(MODELS_PER_PROMPT_MAX)
  .refine((ids) => new Set(ids).size === ids.length, 'a model may be named only once in a prompt')
  .meta({ uniqueItems: true });

/**
 * What the client had shown of each answer a pivot or a regenerate halts beside the one it names (docs/PROTOCOL.md
 * §30.3): an answer not listed is cut at what it was sent.
 */
const SiblingsReceivedSchema = z
  .array(
    z.object({
      nodeId: MessageIdSchema,
      receivedContentLength: ContentLengthSchema.optional(),
      receivedReasoningLength: ReasoningLengthSchema.optional(),
    }),
  )
  .min(1)
  .max(MODELS_PER_PROMPT_MAX);

/** §3.1.A — halt the streaming node, keep its partial text, branch the new prompt under it. */
export const PivotInitFrameSchema = clientFrame(
  'CPP_PIVOT_INIT',
  saysSomething(
    z.object({
      interruptedNodeId: MessageIdSchema,
      activeThreadId: ThreadIdSchema,
      userPrompt: UserPromptSchema,
      newBranchNodeId: MessageIdSchema,
      /** Files uploaded before (docs/PROTOCOL.md §27) that the new prompt carries. */
      attachments: AttachmentIdsSchema.optional(),
      receivedContentLength: ContentLengthSchema.optional(),
      receivedReasoningLength: ReasoningLengthSchema.optional(),
      siblingsReceived: SiblingsReceivedSchema.optional(),
      expectedVersion: ExpectedVersionSchema.optional(),
      model: ModelIdSchema.optional(),
      models: ModelIdsSchema.optional(),
    }),
  ),
);

/** §3.1.B — move the head pointer to any node of the thread. */
export const AnchorHeadFrameSchema = clientFrame(
  'CPP_ANCHOR_HEAD',
  z.object({
    activeThreadId: ThreadIdSchema,
    targetNodeId: MessageIdSchema,
    expectedVersion: ExpectedVersionSchema.optional(),
  }),
);

/** Open (creating when new) and subscribe to a thread; answered by CPP_SYNC_GRAPH. */
export const ThreadOpenFrameSchema = clientFrame(
  'CPP_THREAD_OPEN',
  z.object({
    threadId: ThreadIdSchema.optional(),
    /** Opt in to CPP_GRAPH_PATCH after structural changes instead of a full CPP_SYNC_GRAPH. */
    patches: z.boolean().optional(),
    /** Opt in to CPP_PRESENCE: who else has the thread open (docs/PROTOCOL.md §29.9). */
    presence: z.boolean().optional(),
  }),
);

/** Stop receiving a thread's frames on this connection. Generations keep running. */
export const ThreadCloseFrameSchema = clientFrame('CPP_THREAD_CLOSE', z.object({ threadId: ThreadIdSchema }));

/** A user node under `parentNodeId` (or the head), then an assistant answer streamed under it. */
export const PromptFrameSchema = clientFrame(
  'CPP_PROMPT',
  saysSomething(
    z.object({
      activeThreadId: ThreadIdSchema,
      userPrompt: UserPromptSchema,
      newNodeId: MessageIdSchema,
      /** `null`: a first prompt beside the thread's others, the edit of its first prompt (docs/PROTOCOL.md §24.2). */
      parentNodeId: MessageIdSchema.nullable().optional(),
      /** Files uploaded before (docs/PROTOCOL.md §27) that the prompt carries. */
      attachments: AttachmentIdsSchema.optional(),
      expectedVersion: ExpectedVersionSchema.optional(),
      model: ModelIdSchema.optional(),
      models: ModelIdsSchema.optional(),
    }),
  ),
);

/** Halt a generation without a new prompt; answered by CPP_STREAM_HALTED. */
export const StreamStopFrameSchema = clientFrame(
  'CPP_STREAM_STOP',
  z.object({
    activeThreadId: ThreadIdSchema,
    nodeId: MessageIdSchema,
    receivedContentLength: ContentLengthSchema.optional(),
    receivedReasoningLength: ReasoningLengthSchema.optional(),
  }),
);

/**
 * One page of this identity's threads, most recently updated first; answered by CPP_THREADS. `cursor` continues
 * after the page that returned it; `subscribe` turns the list's small updates (CPP_THREAD_UPDATED) on or off.
 */
export const ThreadListFrameSchema = clientFrame(
  'CPP_THREAD_LIST',
  z.object({
    limit: z.number().int().min(1).max(THREAD_LIST_MAX_LIMIT).optional(),
    cursor: z.string().min(1).max(THREAD_LIST_CURSOR_MAX_LENGTH).optional(),
    subscribe: z.boolean().optional(),
  }),
);

/** List the models this server offers; answered by CPP_MODELS. */
export const ModelListFrameSchema = clientFrame('CPP_MODEL_LIST', z.object({}));

/** Ask for a full CPP_SYNC_GRAPH of an open thread. */
export const SyncRequestFrameSchema = clientFrame('CPP_SYNC_REQUEST', z.object({ threadId: ThreadIdSchema }));

/**
 * A new answer to `userNodeId`, beside its earlier ones. The client names the new assistant node, so that a retry
 * is recognised as for a prompt; an answer of that user node still streaming is halted first, as a pivot halts it.
 */
export const RegenerateFrameSchema = clientFrame(
  'CPP_REGENERATE',
  z.object({
    activeThreadId: ThreadIdSchema,
    userNodeId: MessageIdSchema,
    newNodeId: MessageIdSchema,
    receivedContentLength: ContentLengthSchema.optional(),
    receivedReasoningLength: ReasoningLengthSchema.optional(),
    siblingsReceived: SiblingsReceivedSchema.optional(),
    expectedVersion: ExpectedVersionSchema.optional(),
    model: ModelIdSchema.optional(),
    models: ModelIdsSchema.optional(),
  }),
);

/**
 * Go on with an interrupted or failed answer: the same node streams again, its text continuing from where it stopped.
 * Absent `model`: the model that wrote the node, when the server still offers it, else the default.
 */
export const ContinueFrameSchema = clientFrame(
  'CPP_CONTINUE',
  z.object({
    activeThreadId: ThreadIdSchema,
    nodeId: MessageIdSchema,
    expectedVersion: ExpectedVersionSchema.optional(),
    model: ModelIdSchema.optional(),
  }),
);

/** Remove a node and everything under it; the root only goes with its thread. */
export const BranchDeleteFrameSchema = clientFrame(
  'CPP_BRANCH_DELETE',
  z.object({
    activeThreadId: ThreadIdSchema,
    nodeId: MessageIdSchema,
    expectedVersion: ExpectedVersionSchema.optional(),
  }),
);

/** The longest title a user may give a thread, in UTF-16 code units. */
export const THREAD_TITLE_MAX_LENGTH = 200;

/**
 * A title says something (a non-space character), fits a list, and holds what every store keeps as it is: no NUL
 * (PostgreSQL text cannot) and no lone surrogate (UTF-8 cannot), as a prompt.
 */
export const ThreadTitleSchema = z
  .string()
  .max(THREAD_TITLE_MAX_LENGTH)
  .regex(/\S/, 'expected a title with at least one non-space character')
  .regex(/^[^\u0000]*$/, 'a title may not contain the NUL character (U+0000)')
  .regex(/^\P{Surrogate}*$/u, 'a title may not contain a lone surrogate (half of a UTF-16 pair)')
  .meta({ description: utf16Length(THREAD_TITLE_MAX_LENGTH) });

/** Give a thread the user's own title, which automatic titles never replace. */
export const ThreadRenameFrameSchema = clientFrame(
  'CPP_THREAD_RENAME',
  z.object({ threadId: ThreadIdSchema, title: ThreadTitleSchema, expectedVersion: ExpectedVersionSchema.optional() }),
);

/** Delete a thread and everything in it; answered by CPP_THREAD_DELETED. */
export const ThreadDeleteFrameSchema = clientFrame(
  'CPP_THREAD_DELETE',
  z.object({ threadId: ThreadIdSchema, expectedVersion: ExpectedVersionSchema.optional() }),
);

/** Search the identity's threads by title and message text; answered by CPP_SEARCH_RESULTS. */
export const ThreadSearchFrameSchema = clientFrame(
  'CPP_THREAD_SEARCH',
  z.object({
    query: z.string().max(SEARCH_QUERY_MAX_LENGTH),
    limit: z.number().int().min(1).max(SEARCH_RESULTS_MAX).optional(),
  }),
);

/** Ask for a ticket to the attachment endpoints (docs/PROTOCOL.md §27.2); answered by CPP_ATTACHMENT_TICKET. */
export const AttachmentTicketRequestFrameSchema = clientFrame('CPP_ATTACHMENT_TICKET_REQUEST', z.object({}));

/** The formats a thread can be imported from. */
export const ImportFormatSchema = z.enum(['cpp-thread', 'chatgpt']);
export type ImportFormat = z.infer<typeof ImportFormatSchema>;

/** Import threads from a document the user holds (an export of CPP or of ChatGPT); answered by CPP_THREADS_IMPORTED. */
export const ThreadImportFrameSchema = clientFrame(
  'CPP_THREAD_IMPORT',
  z.object({ format: ImportFormatSchema, document: z.unknown() }),
);

/** How long the reason given with an approval or a denial may be, in UTF-16 code units. */
export const TOOL_APPROVAL_REASON_MAX_LENGTH = 2000;

/**
 * Approves or denies a tool call of the streaming node that waits for it (`approval-requested`, docs/PROTOCOL.md
 * §26.9); answered by the call's CPP_TOOL_CALL.
 */
export const ToolApprovalFrameSchema = clientFrame(
  'CPP_TOOL_APPROVAL',
  z.object({
    activeThreadId: ThreadIdSchema,
    nodeId: MessageIdSchema,
    toolCallId: ToolCallIdSchema,
    approved: z.boolean(),
    reason: z
      .string()
      .max(TOOL_APPROVAL_REASON_MAX_LENGTH)
      .regex(/^[^\u0000]*$/, 'a reason may not contain the NUL character (U+0000)')
      .regex(/^\P{Surrogate}*$/u, 'a reason may not contain a lone surrogate (half of a UTF-16 pair)')
      .meta({ description: utf16Length(TOOL_APPROVAL_REASON_MAX_LENGTH) })
      .optional(),
  }),
);

/** What a member of another identity's thread may do there (docs/PROTOCOL.md §29.1). */
export const MemberRoleSchema = z.enum(['reader', 'writer']);
export type MemberRole = z.infer<typeof MemberRoleSchema>;

/** A DID as the handshake takes it (§2.2). */
const MemberDidSchema = z.string().max(DID_MAX_LENGTH).regex(DID_PATTERN, 'expected a DID: did:METHOD:IDENTIFIER');

/** The owner makes `did` a member of the thread with `role`, or changes a member's role; answered by CPP_MEMBERS. */
export const MemberAddFrameSchema = clientFrame(
  'CPP_MEMBER_ADD',
  z.object({ threadId: ThreadIdSchema, did: MemberDidSchema, role: MemberRoleSchema }),
);

/** The owner removes a member, or a member leaves (`did` its own); answered by CPP_MEMBERS, or by CPP_THREAD_REVOKED. */
export const MemberRemoveFrameSchema = clientFrame(
  'CPP_MEMBER_REMOVE',
  z.object({ threadId: ThreadIdSchema, did: MemberDidSchema }),
);

/** The thread's owner and members; answered by CPP_MEMBERS. */
export const MemberListFrameSchema = clientFrame('CPP_MEMBER_LIST', z.object({ threadId: ThreadIdSchema }));

/** Text a client sends as a tool's output or error: what every store holds as it is (§3.3). */
const ToolAnswerTextSchema = z
  .string()
  .regex(/^[^\u0000]*$/, 'may not contain the NUL character (U+0000)')
  .regex(/^\P{Surrogate}*$/u, 'may not contain a lone surrogate (half of a UTF-16 pair)');

/**
 * A client's answer to a call of a tool that runs on the client (`runsOn: "client"`, docs/PROTOCOL.md §26.10): its
 * `output`, or the `errorText` of its failure (exactly one of them); answered by the call's CPP_TOOL_CALL.
 */
export const ToolResultFrameSchema = clientFrame(
  'CPP_TOOL_RESULT',
  z
    .object({
      activeThreadId: ThreadIdSchema,
      nodeId: MessageIdSchema,
      toolCallId: ToolCallIdSchema,
      output: ToolAnswerTextSchema.optional(),
      errorText: ToolAnswerTextSchema.optional(),
    })
    .refine((payload) => (payload.output === undefined) !== (payload.errorText === undefined), {
      message: 'expected exactly one of output and errorText',
      path: ['output'],
    }),
);

/** An invite's token (docs/PROTOCOL.md §29.7): `cppinv_` and 43 base64url characters, 256 random bits. */
export const InviteTokenSchema = z
  .string()
  .regex(/^cppinv_[A-Za-z0-9_-]{43}$/, 'expected an invite token: cppinv_ followed by 43 of [A-Za-z0-9_-]');

/** An invite's id, which names it to its owner without being the capability. */
export const InviteIdSchema = z
  .string()
  .regex(/^inv_[A-Za-z0-9_-]{22}$/, 'expected an invite id: inv_ and 22 of [A-Za-z0-9_-]');

/** The longest an invite may last, in milliseconds: 30 days. */
export const INVITE_MAX_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

/** The owner makes an invite to the thread with a role; answered by CPP_INVITE, which alone carries the token. */
export const InviteCreateFrameSchema = clientFrame(
  'CPP_INVITE_CREATE',
  z.object({
    threadId: ThreadIdSchema,
    role: MemberRoleSchema,
    /** How long the invite lasts; default 7 days. */
    expiresInMs: z.number().int().min(1).max(INVITE_MAX_LIFETIME_MS).optional(),
    /** How many identities may join with it; default 1. */
    maxUses: z.number().int().min(1).max(1000).optional(),
  }),
);

/** The thread's invites still usable, without their tokens; answered by CPP_INVITES. */
export const InviteListFrameSchema = clientFrame('CPP_INVITE_LIST', z.object({ threadId: ThreadIdSchema }));

/** The owner revokes an invite: its token joins nobody any more; answered by CPP_INVITES. */
export const InviteRevokeFrameSchema = clientFrame(
  'CPP_INVITE_REVOKE',
  z.object({ threadId: ThreadIdSchema, inviteId: InviteIdSchema }),
);

/** A proven identity joins the thread of an invite with the invite's role; answered by CPP_MEMBERS. */
export const InviteAcceptFrameSchema = clientFrame('CPP_INVITE_ACCEPT', z.object({ token: InviteTokenSchema }));

/**
 * A writer is typing a prompt in the thread (`typing: true`, sent again at least every few seconds while it goes on),
 * or stopped; not answered: the thread's CPP_PRESENCE says it (docs/PROTOCOL.md §29.9).
 */
export const TypingFrameSchema = clientFrame('CPP_TYPING', z.object({ threadId: ThreadIdSchema, typing: z.boolean() }));

/** A read-only share link's token (docs/PROTOCOL.md §29.10): `cppshr_` and 43 base64url characters, 256 random bits. */
export const ShareTokenSchema = z
  .string()
  .regex(/^cppshr_[A-Za-z0-9_-]{43}$/, 'expected a share token: cppshr_ followed by 43 of [A-Za-z0-9_-]');

/** A share link's id, which names it to its owner without being the capability. */
export const ShareLinkIdSchema = z
  .string()
  .regex(/^shr_[A-Za-z0-9_-]{22}$/, 'expected a share link id: shr_ and 22 of [A-Za-z0-9_-]');

/** What a share link shows: the active branch (root to head) or the whole tree, as they are when it is made. */
export const ShareScopeSchema = z.enum(['branch', 'tree']);
export type ShareScope = z.infer<typeof ShareScopeSchema>;

/** The owner makes a read-only link to a snapshot of the thread; answered by CPP_SHARE_LINK, which alone has the token. */
export const ShareLinkCreateFrameSchema = clientFrame(
  'CPP_SHARE_LINK_CREATE',
  z.object({ threadId: ThreadIdSchema, scope: ShareScopeSchema }),
);

/** The owner's share links of the thread, without their tokens; answered by CPP_SHARE_LINKS. */
export const ShareLinkListFrameSchema = clientFrame('CPP_SHARE_LINK_LIST', z.object({ threadId: ThreadIdSchema }));

/** The owner revokes a share link: its page is gone at once; answered by CPP_SHARE_LINKS. */
export const ShareLinkRevokeFrameSchema = clientFrame(
  'CPP_SHARE_LINK_REVOKE',
  z.object({ threadId: ThreadIdSchema, linkId: ShareLinkIdSchema }),
);

export const ClientFrameSchema = z.discriminatedUnion('type', [
  PivotInitFrameSchema,
  AnchorHeadFrameSchema,
  ThreadOpenFrameSchema,
  ThreadCloseFrameSchema,
  PromptFrameSchema,
  StreamStopFrameSchema,
  ThreadListFrameSchema,
  SyncRequestFrameSchema,
  RegenerateFrameSchema,
  ContinueFrameSchema,
  BranchDeleteFrameSchema,
  ModelListFrameSchema,
  AuthProofFrameSchema,
  ThreadRenameFrameSchema,
  ThreadDeleteFrameSchema,
  ThreadSearchFrameSchema,
  ThreadImportFrameSchema,
  AttachmentTicketRequestFrameSchema,
  ToolApprovalFrameSchema,
  MemberAddFrameSchema,
  MemberRemoveFrameSchema,
  MemberListFrameSchema,
  ToolResultFrameSchema,
  InviteCreateFrameSchema,
  InviteListFrameSchema,
  InviteRevokeFrameSchema,
  InviteAcceptFrameSchema,
  TypingFrameSchema,
  ShareLinkCreateFrameSchema,
  ShareLinkListFrameSchema,
  ShareLinkRevokeFrameSchema,
]);

export type PivotInitFrame = z.infer<typeof PivotInitFrameSchema>;
export type AnchorHeadFrame = z.infer<typeof AnchorHeadFrameSchema>;
export type ThreadOpenFrame = z.infer<typeof ThreadOpenFrameSchema>;
export type ThreadCloseFrame = z.infer<typeof ThreadCloseFrameSchema>;
export type PromptFrame = z.infer<typeof PromptFrameSchema>;
export type StreamStopFrame = z.infer<typeof StreamStopFrameSchema>;
export type ThreadListFrame = z.infer<typeof ThreadListFrameSchema>;
export type SyncRequestFrame = z.infer<typeof SyncRequestFrameSchema>;
export type RegenerateFrame = z.infer<typeof RegenerateFrameSchema>;
export type ContinueFrame = z.infer<typeof ContinueFrameSchema>;
export type BranchDeleteFrame = z.infer<typeof BranchDeleteFrameSchema>;
export type ThreadRenameFrame = z.infer<typeof ThreadRenameFrameSchema>;
export type ThreadDeleteFrame = z.infer<typeof ThreadDeleteFrameSchema>;
export type ThreadSearchFrame = z.infer<typeof ThreadSearchFrameSchema>;
export type ThreadImportFrame = z.infer<typeof ThreadImportFrameSchema>;
export type AttachmentTicketRequestFrame = z.infer<typeof AttachmentTicketRequestFrameSchema>;
export type MemberAddFrame = z.infer<typeof MemberAddFrameSchema>;
export type MemberRemoveFrame = z.infer<typeof MemberRemoveFrameSchema>;
export type MemberListFrame = z.infer<typeof MemberListFrameSchema>;
export type ModelListFrame = z.infer<typeof ModelListFrameSchema>;
export type ToolApprovalFrame = z.infer<typeof ToolApprovalFrameSchema>;
export type ToolResultFrame = z.infer<typeof ToolResultFrameSchema>;
export type ClientFrame = z.infer<typeof ClientFrameSchema>;
export type ClientFrameType = ClientFrame['type'];
export type ClientPayload<Type extends ClientFrameType> = Extract<ClientFrame, { type: Type }>['payload'];
