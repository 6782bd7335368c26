import {
  ErrorCode,
  encodeClientFrame,
  exportThread,
  threadToMarkdown,
  getNode,
  newMessageId,
  newThreadId,
  partText,
  streamingNode,
  streamingNodes,
  type ClientFrame,
  type DecodeFailure,
  type ImportFormat,
  type SearchHit,
  type MessageNode,
  type ServerFrame,
  type ServerFrameType,
  type InviteSummary,
  type MemberRole,
  type PresentIdentity,
  type ShareLinkSummary,
  type ShareScope,
  type ServerPayload,
  type ThreadGraph,
  type ThreadSummary,
  type ThreadsFrame,
  type ModelsFrame,
  type ToolCall,
  type ToolCallFrame,
} from '@promethea/cpp-protocol';
import type {
  AnchorOptions,
  ContinueOptions,
  CPPClientOptions,
  DeleteBranchOptions,
  EditOptions,
  ExportFormat,
  PivotOptions,
  PromptOptions,
  RegenerateOptions,
  ListThreadsOptions,
  RenameOptions,
  SearchOptions,
  StopOptions,
  ToolApprovalOptions,
  ToolResultOptions,
  ClientToolHandler,
} from './client-options.js';
import type { AttachmentSource, AttachmentUploads } from './attachment-upload.js';
import { ClientEventListeners, type EventName } from './client-event-listeners.js';
import type { CPPClientEvents } from './client-events.js';
import type { ClientPlatform } from './client-platform.js';
import { ClientFrameFactory } from './client-frame.js';
import type { ConnectionClosedError } from './connection-closed-error.js';
import { CPPServerError } from './cpp-server-error.js';
import { FrameWaiter, type Answer } from './frame-waiter.js';
import { Generation, type GenerationRequest, type GenerationResult } from './generation.js';
import { PendingRequests, type PendingRequest, type ReceivedLengths } from './pending-requests.js';
import { ReconnectingConnection, type ConnectionStatus } from './reconnect.js';
import { reconnectPolicy } from './reconnect-policy.js';
import { SendQueueFullError } from './send-queue-full-error.js';
import { sessionOpener } from './session-opener.js';
import { httpUrl, sessionUrl } from './session-url.js';
import { ThreadClosedError } from './thread-closed-error.js';
import { ThreadMirrors } from './thread-mirrors.js';
import { UnansweredRequest } from './unanswered-request.js';

const MAX_QUEUED_FRAMES = 100;

/**
 * A CPP session: sends the client frames, keeps an exact mirror of every thread it opened, and settles each
 * request from the frames that answer it. Platform-neutral; the `browser` and `node` entry points supply the
 * socket. It connects at construction, and frames sent while it is not connected go out in order once it is.
 * After losing an established connection it reconnects, opens its threads again and resumes: see README.md.
 */
export class CPPClient {
  private readonly connection: ReconnectingConnection;
  private readonly events = new ClientEventListeners();
  private readonly frames = new ClientFrameFactory();
  private readonly mirrors = new ThreadMirrors();
  private readonly requests = new PendingRequests();
  private readonly openings = new Map<string, Promise<ThreadGraph>>();
  private readonly resyncs = new Set<string>();
  private readonly patches: boolean;
  private readonly presenceWanted: boolean;
  /** The last CPP_PRESENCE of each open thread. */
  private readonly presences = new Map<string, PresentIdentity[]>();
  private readonly maxQueuedFrames: number;
  private readonly toolHandlers: Record<string, ClientToolHandler>;
  /** The calls of client tools this client has taken, run once each. */
  private readonly clientToolCalls = new Set<string>();
  private currentThreadId: string | undefined;
  /** Where the attachment endpoints are: the session's origin. */
  private readonly sessionUrl: URL;
  private readonly readFile: ClientPlatform['readFile'];
  /** The client's uploads, from the first file on. */
  private uploads: AttachmentUploads | undefined;

  constructor(options: CPPClientOptions, platform: ClientPlatform) {
    this.patches = options.patches ?? true;
    this.presenceWanted = options.presence ?? true;
    this.toolHandlers = options.tools ?? {};
    this.sessionUrl = sessionUrl(options.endpoint);
    this.readFile = platform.readFile;
    this.maxQueuedFrames = options.maxQueuedFrames ?? MAX_QUEUED_FRAMES;
    this.connection = new ReconnectingConnection(
      sessionOpener(options, platform),
      reconnectPolicy(options.reconnect),
      {
        frame: (frame) => this.receive(frame),
        invalidFrame: (failure) => this.rejectFrame(failure),
        lost: (error) => this.requests.connectionLost(error),
        resume: () => this.resume(),
        statusChanged: (status, closedError) => this.statusChanged(status, closedError),
      },
      platform.decodeServerFrame,
    );
  }

  get status(): ConnectionStatus {
    return this.connection.status;
  }

  /** The thread that prompts, pivots and anchors act on when they name none: the last one opened. */
  get activeThreadId(): string | undefined {
    return this.currentThreadId;
  }

  /** Resolves once the session is open (at once when it is); rejects if it closes for good first. */
  ready(): Promise<void> {
    return this.connection.ready();
  }

  /** The live mirror of a thread (default: the active one), or `undefined` until its first sync. */
  graph(threadId = this.currentThreadId): ThreadGraph | undefined {
    return threadId === undefined ? undefined : this.mirrors.get(threadId);
  }

  /** Every node streaming in the thread: one answer, or the answers several models write side by side (§30). */
  streamingNodes(threadId?: string): MessageNode[] {
    const graph = this.mirrors.get(threadId ?? this.currentThreadId ?? '');
    return graph ? streamingNodes(graph) : [];
  }

  /**
   * What this client holds of each answer streaming beside `nodeId` (several models'), as `siblingsReceived`, and a
   * function that tells their pending requests they are being cut there.
   */
  private siblingsReceived(
    threadId: string,
    nodeId: string,
  ): { fields: { siblingsReceived?: SiblingReceived[] }; interrupting(): void } {
    const others = this.streamingNodes(threadId).filter((node) => node.id !== nodeId);
    const received = others.map((node) => ({ node, lengths: receivedLengths(node, {}) }));
    return {
      fields:
        received.length === 0
          ? {}
          : {
              siblingsReceived: received.map(({ node, lengths }) => ({
                nodeId: node.id,
                ...receivedFields(lengths),
              })),
            },
      interrupting: () => {
        for (const { node, lengths } of received) this.requests.interrupting(node.id, lengths);
      },
    };
  }

  /** The node now streaming in a thread, if any (the first, when several models answer side by side). */
  streamingNode(threadId?: string): MessageNode | undefined {
    const graph = this.graph(threadId);
    return graph && streamingNode(graph);
  }

  /** Opens (or creates, without an id) a thread and makes it the active one; resolves with its first sync. */
  openThread(threadId: string = newThreadId()): Promise<ThreadGraph> {
    const previous = this.currentThreadId;
    this.currentThreadId = threadId;
    this.mirrors.open(threadId);
    const frame = this.frames.create('CPP_THREAD_OPEN', this.openPayload(threadId));
    const opening = this.request(frame, new FrameWaiter(frame.id, (reply) => this.syncOf(threadId, reply), threadId));
    this.openings.set(threadId, opening);
    const settled = () => this.openings.delete(threadId);
    opening.then(settled, () => {
      settled();
      if (this.currentThreadId === threadId) this.currentThreadId = previous;
    });
    return opening;
  }

  private openPayload(threadId: string) {
    return { threadId, patches: this.patches, ...(this.presenceWanted ? { presence: true } : {}) };
  }

  /**
   * Who has the thread (default: the active one) open, this client's identity among them, with whether each types
   * (PROTOCOL.md §29.9): as the server last said; empty before it has said, or with the `presence` option off.
   */
  presence(threadId = this.currentThreadId): PresentIdentity[] {
    return (threadId !== undefined && this.presences.get(threadId)) || [];
  }

  /**
   * Tells the thread's members whether this identity types a prompt there (a writer's, PROTOCOL.md §29.9): send
   * `true` again every few seconds while the user types (it holds 6 s), `false` when the prompt goes or is cleared.
   */
  setTyping(typing: boolean, threadId = this.currentThreadId): Promise<void> {
    const frame = this.frames.create('CPP_TYPING', { threadId: this.named(threadId), typing });
    return this.request(frame, new UnansweredRequest());
  }

  /** A user node under `parentNodeId` (default: the head), answered by the model; settles when the answer ends. */
  async prompt(options: PromptOptions): Promise<GenerationResult> {
    const threadId = await this.ensureThread(options.threadId);
    const attachments = await this.uploadAll(options.attachments);
    const userNodeId = newMessageId();
    const frame = this.frames.create('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: options.userPrompt,
      newNodeId: userNodeId,
      parentNodeId: options.parentNodeId,
      attachments,
      expectedVersion: options.expectedVersion,
      model: options.model,
      models: options.models && [...options.models],
    });
    const { onStream, onReasoning, models } = options;
    return this.generate(frame, { threadId, userNodeId, onStream, onReasoning, answers: models?.length });
  }

  /**
   * Spec §3.1.A: halts the node streaming in the thread and branches the prompt under its partial text. With
   * nothing streaming, the prompt simply branches from the head.
   */
  async pivot(options: PivotOptions): Promise<GenerationResult> {
    const threadId = await this.ensureThread(options.threadId);
    const interrupted = this.streamingNodes(threadId).find(
      (node, index) => node.id === options.nodeId || (options.nodeId === undefined && index === 0),
    );
    const { onStream, onReasoning } = options;
    // Options a prompt does not take (the received lengths) are left unread.
    if (!interrupted) return this.prompt({ ...options, threadId });
    const attachments = await this.uploadAll(options.attachments);
    const newBranchNodeId = newMessageId();
    const received = receivedLengths(interrupted, options);
    // The answers streaming beside it (several models') halt too, each where this client holds it (§30.3).
    const siblings = this.siblingsReceived(threadId, interrupted.id);
    const frame = this.frames.create('CPP_PIVOT_INIT', {
      interruptedNodeId: interrupted.id,
      activeThreadId: threadId,
      userPrompt: options.userPrompt,
      newBranchNodeId,
      attachments,
      ...receivedFields(received),
      ...siblings.fields,
      expectedVersion: options.expectedVersion,
      model: options.model,
      models: options.models && [...options.models],
    });
    this.requests.interrupting(interrupted.id, received);
    siblings.interrupting();
    const answers = options.models?.length;
    return this.generate(frame, { threadId, userNodeId: newBranchNodeId, onStream, onReasoning, answers });
  }

  /**
   * A new answer to a user node (PROTOCOL.md §24.1), beside its earlier ones; an answer of it still streaming is
   * halted first, cut where the user had seen it. Settles when the new answer ends.
   */
  async regenerate(options: RegenerateOptions = {}): Promise<GenerationResult> {
    const threadId = await this.ensureThread(options.threadId);
    const graph = this.mirrors.get(threadId);
    const named = graph && getNode(graph, options.nodeId ?? graph.activeHeadMessageId ?? '');
    const userNode = named?.role === 'assistant' && named.parentId !== null ? getNode(graph!, named.parentId) : named;
    if (!userNode) throw new Error(`no node ${options.nodeId ?? '(the head)'} to regenerate in thread ${threadId}`);
    const streaming = this.streamingNode(threadId);
    const halting = streaming?.parentId === userNode.id ? streaming : undefined;
    const received = halting && receivedLengths(halting, options);
    const siblings = halting ? this.siblingsReceived(threadId, halting.id) : undefined;
    const assistantNodeId = newMessageId();
    const frame = this.frames.create('CPP_REGENERATE', {
      activeThreadId: threadId,
      userNodeId: userNode.id,
      newNodeId: assistantNodeId,
      ...(received ? receivedFields(received) : {}),
      ...siblings?.fields,
      expectedVersion: options.expectedVersion,
      model: options.model,
      models: options.models && [...options.models],
    });
    if (halting && received) this.requests.interrupting(halting.id, received);
    siblings?.interrupting();
    return this.generate(frame, {
      threadId,
      userNodeId: userNode.id,
      assistantNodeId,
      onStream: options.onStream,
      onReasoning: options.onReasoning,
      answers: options.models?.length,
    });
  }

  /**
   * Goes on with an interrupted or failed answer (PROTOCOL.md §24.4): the same node streams again, its text
   * continuing where it stopped. `onStream` gets only the text that follows; the result holds the node's whole
   * text. Settles when the node stops streaming again.
   */
  async continue(options: ContinueOptions = {}): Promise<GenerationResult> {
    const threadId = await this.ensureThread(options.threadId);
    const graph = this.mirrors.get(threadId);
    const node = graph && getNode(graph, options.nodeId ?? graph.activeHeadMessageId ?? '');
    if (node?.role !== 'assistant' || node.parentId === null)
      throw new Error(`no answer ${options.nodeId ?? '(the head)'} to continue in thread ${threadId}`);
    const frame = this.frames.create('CPP_CONTINUE', {
      activeThreadId: threadId,
      nodeId: node.id,
      expectedVersion: options.expectedVersion,
      model: options.model,
    });
    const { onStream, onReasoning } = options;
    return this.generate(frame, {
      threadId,
      userNodeId: node.parentId,
      assistantNodeId: node.id,
      continues: true,
      onStream,
      onReasoning,
    });
  }

  /**
   * Edits a prompt (PROTOCOL.md §24.2): the new text goes beside the user node `nodeId`, under the same parent, and
   * is answered; the old branch stays. The thread's first prompt has no parent: its edit is a first prompt beside it,
   * and its versions are siblings as any prompt's are (`firstPrompts`).
   */
  async edit(options: EditOptions): Promise<GenerationResult> {
    const threadId = await this.ensureThread(options.threadId);
    const graph = this.mirrors.get(threadId);
    const edited = graph && getNode(graph, options.nodeId);
    if (edited?.role !== 'user') throw new Error(`no user node ${options.nodeId} to edit in thread ${threadId}`);
    // The edited node's id, which a prompt does not take, is left unread.
    return this.prompt({ ...options, threadId, parentNodeId: edited.parentId });
  }

  /**
   * Deletes a node and its subtree (PROTOCOL.md §24.3); the head moves to its parent when it was inside. Resolves
   * with the mirror once it no longer holds the node.
   */
  async deleteBranch(nodeId: string, options: DeleteBranchOptions = {}): Promise<ThreadGraph> {
    const threadId = await this.ensureThread(options.threadId);
    const frame = this.frames.create('CPP_BRANCH_DELETE', {
      activeThreadId: threadId,
      nodeId,
      expectedVersion: options.expectedVersion,
    });
    const removed = (reply: ServerFrame): Answer<ThreadGraph> => {
      const graph = this.structuralUpdateOf(threadId, reply);
      return graph && !getNode(graph, nodeId) ? { value: graph } : undefined;
    };
    return this.request(frame, new FrameWaiter(frame.id, removed, threadId));
  }

  /** Spec §3.1.B: moves the thread's head; resolves with the mirror once it shows the new head. */
  async anchor(targetNodeId: string, options: AnchorOptions = {}): Promise<ThreadGraph> {
    const threadId = await this.ensureThread(options.threadId);
    const frame = this.frames.create('CPP_ANCHOR_HEAD', {
      activeThreadId: threadId,
      targetNodeId,
      expectedVersion: options.expectedVersion,
    });
    return this.request(
      frame,
      new FrameWaiter(
        frame.id,
        (reply) => {
          const graph = this.structuralUpdateOf(threadId, reply);
          return graph?.activeHeadMessageId === targetNodeId ? { value: graph } : undefined;
        },
        threadId,
      ),
    );
  }

  /**
   * Runs a call of a tool that runs on this client, once: its handler's output, or its error, goes back with
   * CPP_TOOL_RESULT. Another client may have answered first: the server's CONFLICT then is no one's concern.
   */
  private runClientTool({ threadId, nodeId, toolCall }: ToolCallFrame['payload']): void {
    const handler = this.toolHandlers[toolCall.toolName];
    const { toolCallId } = toolCall;
    if (!handler || toolCall.runsOn !== 'client' || toolCall.state !== 'input-available') return;
    if (toolCall.approval?.approved === false || this.clientToolCalls.has(toolCallId)) return;
    this.clientToolCalls.add(toolCallId);
    const send = (answer: { output: unknown } | { errorText: string }) =>
      this.answerToolCall({ threadId, nodeId, toolCallId, ...answer }).catch(() => undefined);
    Promise.resolve()
      .then(() => handler(JSON.parse(toolCall.input), { threadId, nodeId, toolCallId }))
      .then(
        (output: unknown) => send({ output }),
        (error: unknown) => send({ errorText: error instanceof Error ? error.message : String(error) }),
      );
  }

  /** Whether this client runs the client tool `toolName` itself (it was given a handler of it in `tools`). */
  handlesTool(toolName: string): boolean {
    return Object.hasOwn(this.toolHandlers, toolName);
  }

  /**
   * Answers a call of a tool that runs on a client (`runsOn: "client"`, `input-available`, PROTOCOL.md §26.10) with
   * its output (a string as it is, anything else as its JSON) or its `errorText`, for an application that runs the
   * tool itself rather than through `tools`. Resolves once the call has ended with it; refused with CONFLICT when
   * another answer came first, NOT_STREAMING when its answer has ended, NOT_FOUND when the thread has no such call.
   */
  async answerToolCall(options: ToolResultOptions): Promise<void> {
    const threadId = await this.ensureThread(options.threadId);
    const { nodeId, toolCallId } = options;
    const answer =
      'errorText' in options
        ? { errorText: options.errorText }
        : { output: typeof options.output === 'string' ? options.output : (JSON.stringify(options.output) ?? '') };
    const frame = this.frames.create('CPP_TOOL_RESULT', { activeThreadId: threadId, nodeId, toolCallId, ...answer });
    return this.request(frame, new FrameWaiter(frame.id, (reply) => answered(reply, toolCallId), threadId));
  }

  /**
   * Approves or denies a tool call that waits for approval (`approval-requested`, PROTOCOL.md §26.9). Resolves with
   * the call once the server has taken the answer (approved, it runs; denied, it is `output-denied`); refused with
   * CONFLICT when the call no longer waits (answered already, or its answer halted), NOT_STREAMING when its answer
   * has ended.
   */
  async respondToToolCall(options: ToolApprovalOptions): Promise<ToolCall> {
    const threadId = await this.ensureThread(options.threadId);
    const { nodeId, toolCallId, approved, reason } = options;
    const frame = this.frames.create('CPP_TOOL_APPROVAL', {
      activeThreadId: threadId,
      nodeId,
      toolCallId,
      approved,
      reason,
    });
    return this.request(
      frame,
      new FrameWaiter(
        frame.id,
        (reply) =>
          reply.type === 'CPP_TOOL_CALL' &&
          reply.payload.toolCall.toolCallId === toolCallId &&
          reply.payload.toolCall.state !== 'approval-requested'
            ? { value: reply.payload.toolCall }
            : undefined,
        threadId,
      ),
    );
  }

  /**
   * Halts the streaming node of the thread, keeping its partial text. Resolves once the mirror shows the node
   * stopped (however it ended), or at once when nothing streams.
   */
  async stop(options: StopOptions = {}): Promise<void> {
    const threadId = options.threadId ?? this.currentThreadId;
    if (threadId === undefined) return;
    const streaming = this.streamingNodes(threadId).filter(
      (node) => options.nodeId === undefined || node.id === options.nodeId,
    );
    // A stop names one answer (§30.3): answers side by side are stopped one frame each.
    await Promise.all(streaming.map((node) => this.stopOne(threadId, node, options)));
  }

  private async stopOne(threadId: string, node: MessageNode, options: StopOptions): Promise<void> {
    const received = receivedLengths(node, options);
    const frame = this.frames.create('CPP_STREAM_STOP', {
      activeThreadId: threadId,
      nodeId: node.id,
      ...receivedFields(received),
    });
    this.requests.interrupting(node.id, received);
    const stopped = (reply: ServerFrame) => notStreaming(reply, frame.id) || !this.isStreaming(threadId, node.id);
    await this.request(
      frame,
      new FrameWaiter(frame.id, (reply) => (stopped(reply) ? { value: undefined } : undefined), threadId),
    );
  }

  /** The models the server offers, and the id of the one a prompt without `model` gets. */
  listModels(): Promise<ModelsFrame['payload']> {
    return this.answer(this.frames.create('CPP_MODEL_LIST', {}), 'CPP_MODELS');
  }

  /** The threads of one page of the list (default: the first 50, newest first); `listThreadPage` tells if there are more. */
  listThreads(options?: ListThreadsOptions): Promise<ThreadSummary[]> {
    return this.listThreadPage(options).then((page) => page.threads);
  }

  /** One page of the thread list and the cursor of the next (`null`: no more), PROTOCOL.md §6.3. */
  listThreadPage(options: ListThreadsOptions = {}): Promise<ThreadsFrame['payload']> {
    // The options are the payload's fields, unset ones left out of the JSON.
    return this.answer(this.frames.create('CPP_THREAD_LIST', options), 'CPP_THREADS');
  }

  /** Gives a thread (default: the active one) the user's own title; resolves with the mirror once it shows it. */
  async renameThread(title: string, options: RenameOptions = {}): Promise<ThreadGraph> {
    const threadId = await this.ensureThread(options.threadId);
    const frame = this.frames.create('CPP_THREAD_RENAME', {
      threadId,
      title,
      expectedVersion: options.expectedVersion,
    });
    const renamed = (reply: ServerFrame) => {
      const graph = this.structuralUpdateOf(threadId, reply);
      return graph && this.mirrors.title(threadId) === title ? { value: graph } : undefined;
    };
    return this.request(frame, new FrameWaiter(frame.id, renamed, threadId));
  }

  /** The user's own title of a thread, as its mirror holds it. */
  threadTitle(threadId = this.currentThreadId): string | undefined {
    return threadId === undefined ? undefined : this.mirrors.title(threadId);
  }

  /**
   * Deletes a thread (default: the active one) with everything in it. Resolves once the server confirms; its
   * mirror is dropped then, as on every client subscribed to it (a `threadDeleted` event).
   */
  deleteThread(threadId = this.currentThreadId, options: { expectedVersion?: number } = {}): Promise<void> {
    if (threadId === undefined) return Promise.reject(new Error('no thread is open: name the thread to delete'));
    const frame = this.frames.create('CPP_THREAD_DELETE', {
      threadId,
      expectedVersion: options.expectedVersion,
    });
    const deleted = (reply: ServerFrame) =>
      reply.type === 'CPP_THREAD_DELETED' && reply.payload.threadId === threadId ? { value: undefined } : undefined;
    return this.request(frame, new FrameWaiter(frame.id, deleted));
  }

  /** The identity's threads whose title or messages hold every word of the query (PROTOCOL.md §25.3), best first. */
  searchThreads(query: string, options: SearchOptions = {}): Promise<SearchHit[]> {
    const frame = this.frames.create('CPP_THREAD_SEARCH', {
      query,
      limit: options.limit,
    });
    const results = (reply: ServerFrame) =>
      reply.type === 'CPP_SEARCH_RESULTS' && reply.payload.query === query ? { value: reply.payload.hits } : undefined;
    return this.request(frame, new FrameWaiter(frame.id, results));
  }

  /**
   * A thread (default: the active one) as a file: `cpp-thread` JSON (the whole tree) or the active branch as
   * Markdown (PROTOCOL.md §25.4). Opens the thread when it is not open.
   */
  async exportThread(format: ExportFormat, threadId?: string): Promise<string> {
    const id = await this.ensureThread(threadId);
    const graph = this.mirrors.get(id)!;
    const title = this.mirrors.title(id) ?? '';
    if (format === 'markdown') return threadToMarkdown(graph, title);
    // The files the messages carry go in the export, base64 (PROTOCOL.md §25.4): fetched only when there are some.
    const carries = Object.values(graph.nodes).some((node) => node.attachments?.length);
    const files = carries ? await (await this.attachments()).exportFiles(graph) : undefined;
    return `${JSON.stringify(exportThread(graph, title, Date.now(), files), null, 2)}\n`;
  }

  /**
   * Imports threads from a CPP JSON export or a ChatGPT `conversations.json` (parsed): all of them or none.
   * Resolves with the new threads. Not idempotent: after a lost connection, list the threads before trying again.
   */
  async importThreads(format: ImportFormat, document: unknown): Promise<ThreadSummary[]> {
    // A CPP JSON export's files are uploaded first, over HTTP, and the frame names the uploads: no bytes in a frame.
    const withFiles = format === 'cpp-thread' && (Array.isArray(document) ? document : [document]).some(holdsFiles);
    if (withFiles) document = await (await this.attachments()).uploadExportFiles(document);
    const frame = this.frames.create('CPP_THREAD_IMPORT', { format, document });
    return this.request(
      frame,
      new FrameWaiter(frame.id, (reply) =>
        reply.type === 'CPP_THREADS_IMPORTED' ? { value: reply.payload.threads } : undefined,
      ),
    );
  }

  /** Asks for a full CPP_SYNC_GRAPH of an open thread and resolves with the mirror it rebuilt. */
  async requestSync(threadId = this.currentThreadId): Promise<ThreadGraph> {
    if (threadId === undefined) throw new Error('no thread is open: call openThread() first');
    this.mirrors.open(threadId);
    const frame = this.frames.create('CPP_SYNC_REQUEST', { threadId });
    return this.request(frame, new FrameWaiter(frame.id, (reply) => this.syncOf(threadId, reply), threadId));
  }

  /**
   * Unsubscribes from a thread (default: the active one) and drops its mirror, at once: its frames still on their
   * way are ignored, a reconnect does not open it again, and it is no longer the active thread. Requests waiting on
   * it fail with ThreadClosedError; its generations go on at the server. The server does not answer a close
   * (PROTOCOL.md §6.2), so this resolves once the frame is sent; an unknown thread's NOT_FOUND comes as an `error`
   * event.
   */
  async closeThread(threadId = this.currentThreadId): Promise<void> {
    if (threadId === undefined) throw new Error('no thread is open: call openThread() first');
    // Closed only once open: a close the server handled before the open would leave the connection subscribed.
    await this.openings.get(threadId)?.catch(() => undefined);
    this.mirrors.close(threadId);
    this.presences.delete(threadId);
    if (this.currentThreadId === threadId) this.currentThreadId = undefined;
    this.requests.failThread(threadId, new ThreadClosedError(threadId));
    const frame = this.frames.create('CPP_THREAD_CLOSE', { threadId });
    return this.request(frame, new UnansweredRequest());
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  on<Event extends EventName>(event: Event, listener: CPPClientEvents[Event]): this {
    this.events.add(event, listener, false);
    return this;
  }

  once<Event extends EventName>(event: Event, listener: CPPClientEvents[Event]): this {
    this.events.add(event, listener, true);
    return this;
  }

  off<Event extends EventName>(event: Event, listener?: CPPClientEvents[Event]): this {
    this.events.remove(event, listener);
    return this;
  }

  /**
   * Files for prompts (PROTOCOL.md §27): `upload(source)` sends a `File` or `Blob`, `{ name, bytes }` or in Node a
   * path over HTTP on the session's origin, with a ticket the session gives, and resolves with what the server kept
   * (whose `id` a prompt names); `url(id)` is where a file is served, a ticket in it, for an `<img src>` or a link.
   * Loaded with the first use: a page that sends or shows no file does not download it.
   */
  async attachments(): Promise<AttachmentUploads> {
    const { AttachmentUploads } = await import('./attachment-upload.js');
    this.uploads ??= new AttachmentUploads(this.sessionUrl, this.readFile, () =>
      this.answer(this.frames.create('CPP_ATTACHMENT_TICKET_REQUEST', {}), 'CPP_ATTACHMENT_TICKET'),
    );
    return this.uploads;
  }

  /** The ids of a prompt's files, each uploaded first; `undefined` without any. */
  private async uploadAll(sources: readonly AttachmentSource[] | undefined): Promise<string[] | undefined> {
    if (!sources?.length) return undefined;
    return (await this.attachments()).ids(sources);
  }

  private async ensureThread(threadId = this.currentThreadId): Promise<string> {
    if (threadId === undefined) return (await this.openThread()).threadId;
    if (!this.mirrors.get(threadId)) await (this.openings.get(threadId) ?? this.openThread(threadId));
    return threadId;
  }

  // ---- Shared threads (PROTOCOL.md §29): each names a thread, the active one by default ----

  /** The owner shares the thread with `did` as a `reader` or `writer`, or changes its role; resolves with the members. */
  async addMember(
    did: string,
    role: MemberRole,
    threadId = this.currentThreadId,
  ): Promise<ServerPayload<'CPP_MEMBERS'>> {
    return this.share('CPP_MEMBER_ADD', { threadId: this.named(threadId), did, role }, 'CPP_MEMBERS');
  }

  /** The owner removes a member; resolves with the members left. */
  async removeMember(did: string, threadId = this.currentThreadId): Promise<ServerPayload<'CPP_MEMBERS'>> {
    return this.share('CPP_MEMBER_REMOVE', { threadId: this.named(threadId), did }, 'CPP_MEMBERS');
  }

  /** The thread's owner and members, for the owner and every member. */
  async listMembers(threadId = this.currentThreadId): Promise<ServerPayload<'CPP_MEMBERS'>> {
    return this.share('CPP_MEMBER_LIST', { threadId: this.named(threadId) }, 'CPP_MEMBERS');
  }

  /** The owner's invite (§29.7): its `token` is told this once; give it to the one person it is for. */
  async createInvite(
    role: MemberRole,
    options: { expiresInMs?: number; maxUses?: number } = {},
    threadId = this.currentThreadId,
  ): Promise<ServerPayload<'CPP_INVITE'>> {
    return this.share('CPP_INVITE_CREATE', { threadId: this.named(threadId), role, ...options }, 'CPP_INVITE');
  }

  /** The owner's invites still usable, oldest first, without their tokens. */
  async listInvites(threadId = this.currentThreadId): Promise<InviteSummary[]> {
    const frame = { threadId: this.named(threadId) };
    return this.share('CPP_INVITE_LIST', frame, 'CPP_INVITES').then((payload) => payload.invites);
  }

  /** The owner revokes an invite; resolves with those still usable. */
  async revokeInvite(inviteId: string, threadId = this.currentThreadId): Promise<InviteSummary[]> {
    const frame = { threadId: this.named(threadId), inviteId };
    return this.share('CPP_INVITE_REVOKE', frame, 'CPP_INVITES').then((payload) => payload.invites);
  }

  /** Joins the thread of an invite's token as this client's proven identity; resolves with its members. */
  acceptInvite(token: string): Promise<ServerPayload<'CPP_MEMBERS'>> {
    return this.share('CPP_INVITE_ACCEPT', { token }, 'CPP_MEMBERS');
  }

  /**
   * The owner's read-only share link (§29.10) of the active branch or the whole tree, as they are now: `url` is its
   * page, which anyone who has it reads without an identity until `revokeShareLink`; its token is told this once.
   */
  async createShareLink(
    scope: ShareScope = 'branch',
    threadId = this.currentThreadId,
  ): Promise<ServerPayload<'CPP_SHARE_LINK'> & { url: string }> {
    const made = await this.share('CPP_SHARE_LINK_CREATE', { threadId: this.named(threadId), scope }, 'CPP_SHARE_LINK');
    return { ...made, url: httpUrl(this.sessionUrl, made.path).href };
  }

  /** The owner's share links of the thread, oldest first, without their tokens. */
  async listShareLinks(threadId = this.currentThreadId): Promise<ShareLinkSummary[]> {
    const frame = { threadId: this.named(threadId) };
    return this.share('CPP_SHARE_LINK_LIST', frame, 'CPP_SHARE_LINKS').then((payload) => payload.links);
  }

  /** The owner revokes a share link: its page is gone at once; resolves with the links left. */
  async revokeShareLink(linkId: string, threadId = this.currentThreadId): Promise<ShareLinkSummary[]> {
    const frame = { threadId: this.named(threadId), linkId };
    return this.share('CPP_SHARE_LINK_REVOKE', frame, 'CPP_SHARE_LINKS').then((payload) => payload.links);
  }

  private share<Type extends ServerFrameType>(
    type: ClientFrame['type'],
    payload: object,
    answer: Type,
  ): Promise<ServerPayload<Type>> {
    return this.answer(this.frames.create(type, payload as never) as ClientFrame & { id: string }, answer);
  }

  private named(threadId: string | undefined): string {
    if (threadId === undefined) throw new Error('no thread is open: name the thread');
    return threadId;
  }

  /** Sends `frame`; resolves with the payload of the first frame of `type` that answers it. */
  private answer<Type extends ServerFrameType>(
    frame: ClientFrame & { id: string },
    type: Type,
  ): Promise<ServerPayload<Type>> {
    const answer = (reply: ServerFrame) =>
      reply.type === type ? { value: reply.payload as ServerPayload<Type> } : undefined;
    return this.request(frame, new FrameWaiter(frame.id, answer));
  }

  private generate(
    frame: ClientFrame & { id: string },
    request: Omit<GenerationRequest, 'frameId'>,
  ): Promise<GenerationResult> {
    return this.request(
      frame,
      new Generation({ frameId: frame.id, ...request }, (threadId) => this.mirrors.get(threadId)),
    );
  }

  private request<Value>(frame: ClientFrame, pending: PendingRequest & { promise: Promise<Value> }): Promise<Value> {
    const closed = this.connection.closeReason;
    if (closed) return Promise.reject(closed);
    if (this.connection.status !== 'open' && this.requests.unsentCount >= this.maxQueuedFrames) {
      return Promise.reject(new SendQueueFullError(this.maxQueuedFrames));
    }
    this.requests.add(pending, frame);
    this.flush();
    return pending.promise;
  }

  /** Sends the frames waiting for the connection, in order, each stamped with the time it actually leaves. */
  private flush(): void {
    if (this.connection.status !== 'open') return;
    for (const frame of this.requests.takeUnsent())
      this.connection.send(encodeClientFrame({ ...frame, timestamp: Date.now() }));
  }

  /**
   * After a reconnect, before anything else goes out: every thread with a mirror is opened again, and its sync
   * brings the mirror up to date (a stream continues from the text the sync carries). Then the frames of requests
   * still waiting go again, except those the syncs show carried out.
   */
  private async resume(): Promise<void> {
    const threadIds = this.mirrors.threadIds();
    const reopened = await Promise.allSettled(threadIds.map((threadId) => this.reopen(threadId)));
    reopened.forEach((outcome, index) => {
      if (outcome.status !== 'rejected' || !(outcome.reason instanceof CPPServerError)) return;
      // Deleted while this client was away: its id is retired, and the copy goes as on a CPP_THREAD_DELETED.
      if (outcome.reason.code === 'NOT_FOUND') this.dropDeleted(threadIds[index]!);
      else this.events.emit('error', outcome.reason);
    });
    this.requests.skipCarriedOut();
  }

  private reopen(threadId: string): Promise<ThreadGraph> {
    const frame = this.frames.create('CPP_THREAD_OPEN', this.openPayload(threadId));
    const waiter = new FrameWaiter(frame.id, (reply) => this.syncOf(threadId, reply), threadId);
    this.requests.add(waiter);
    this.connection.send(encodeClientFrame(frame));
    return waiter.promise;
  }

  private receive(frame: ServerFrame): void {
    if (frame.type === 'CPP_THREAD_DELETED') this.dropDeleted(frame.payload.threadId);
    // Removed from a shared thread: to this identity it no longer exists (PROTOCOL.md §29.4).
    if (frame.type === 'CPP_THREAD_REVOKED') this.dropDeleted(frame.payload.threadId);
    const change = this.mirrors.apply(frame);
    const graph = change && this.mirrors.get(change.threadId);
    if (change?.outcome === 'applied' && graph) this.events.emit('graph', { threadId: change.threadId, graph });
    this.announce(frame, change?.outcome === 'applied');
    const settledRequest = this.requests.observe(frame);
    if (frame.type === 'CPP_ERROR' && !settledRequest && !lateStopAnswer(frame))
      this.events.emit('error', CPPServerError.fromFrame(frame.payload));
    if (change?.outcome === 'gap') this.resync(change.threadId);
  }

  private announce(frame: ServerFrame, applied: boolean): void {
    if (frame.type === 'CPP_STREAM_CHUNK' && applied) this.events.emit('chunk', frame.payload);
    else if (frame.type === 'CPP_TOOL_CALL' && applied) {
      this.events.emit('toolCall', frame.payload);
      this.runClientTool(frame.payload);
    } else if (frame.type === 'CPP_STREAM_HALTED') this.events.emit('halted', frame.payload);
    else if (frame.type === 'CPP_STREAM_COMPLETED') this.events.emit('completed', frame.payload);
    else if (frame.type === 'CPP_THREADS') this.events.emit('threads', frame.payload.threads);
    else if (frame.type === 'CPP_THREAD_UPDATED') this.events.emit('threadUpdated', frame.payload.thread);
    else if (frame.type === 'CPP_PRESENCE' && this.mirrors.get(frame.payload.threadId)) {
      this.presences.set(frame.payload.threadId, frame.payload.present);
      this.events.emit('presence', frame.payload);
    }
  }

  /** The thread no longer exists: its mirror goes, and requests waiting on it fail, as when it is closed. */
  private dropDeleted(threadId: string): void {
    this.presences.delete(threadId);
    if (this.mirrors.get(threadId)) {
      this.mirrors.close(threadId);
      this.requests.failThread(threadId, new ThreadClosedError(threadId, 'deleted'));
    }
    if (this.currentThreadId === threadId) this.currentThreadId = undefined;
    this.events.emit('threadDeleted', threadId);
  }

  /** A mirror that missed a frame asks for the whole graph once; frames until the sync arrives cannot help it. */
  private resync(threadId: string): void {
    if (this.resyncs.has(threadId)) return;
    this.resyncs.add(threadId);
    const done = () => this.resyncs.delete(threadId);
    this.requestSync(threadId).then(done, done);
  }

  private rejectFrame(failure: DecodeFailure): void {
    const details = {
      ...(failure.refId ? { refId: failure.refId } : {}),
      ...(failure.refType ? { refType: failure.refType } : {}),
    };
    this.events.emit(
      'error',
      new CPPServerError(failure.code, `invalid server frame ignored: ${failure.message}`, details),
    );
  }

  private statusChanged(status: ConnectionStatus, closedError: ConnectionClosedError | undefined): void {
    if (closedError) this.requests.failAll(closedError);
    this.flush();
    this.events.emit('status', status);
  }

  private isStreaming(threadId: string, nodeId: string): boolean {
    const graph = this.mirrors.get(threadId);
    return graph !== undefined && getNode(graph, nodeId)?.status === 'streaming';
  }

  private syncOf(threadId: string, frame: ServerFrame): Answer<ThreadGraph> {
    const graph =
      frame.type === 'CPP_SYNC_GRAPH' && frame.payload.threadId === threadId ? this.mirrors.get(threadId) : undefined;
    return graph && { value: graph };
  }

  /** The mirror of `threadId` when `frame` is a sync or patch of it. */
  private structuralUpdateOf(threadId: string, frame: ServerFrame): ThreadGraph | undefined {
    const structural =
      (frame.type === 'CPP_SYNC_GRAPH' || frame.type === 'CPP_GRAPH_PATCH') && frame.payload.threadId === threadId;
    return structural ? this.mirrors.get(threadId) : undefined;
  }
}

/** What the user has seen of a node being halted: what the caller says, or all this client holds of each part. */
function receivedLengths(
  node: MessageNode,
  given: { receivedContentLength?: number; receivedReasoningLength?: number },
): ReceivedLengths {
  return {
    content: given.receivedContentLength ?? node.content.length,
    reasoning: given.receivedReasoningLength ?? partText(node, 'reasoning').length,
  };
}

/** What the client held of an answer halted beside the one a frame names (`siblingsReceived`, PROTOCOL.md §30.3). */
interface SiblingReceived {
  nodeId: string;
  receivedContentLength: number;
  receivedReasoningLength?: number;
}

/** The received lengths as frame fields; the reasoning's only for a node that has reasoning. */
function receivedFields(received: ReceivedLengths): {
  receivedContentLength: number;
  receivedReasoningLength?: number;
} {
  return {
    receivedContentLength: received.content,
    ...(received.reasoning > 0 ? { receivedReasoningLength: received.reasoning } : {}),
  };
}

/**
 * NOT_STREAMING about a stop that has already resolved: the node ended (by itself, or halted by someone else) and
 * the mirror showed it before the server's answer to the stop came. The stop got what it asked for.
 */
function lateStopAnswer(frame: ServerFrame): boolean {
  return (
    frame.type === 'CPP_ERROR' &&
    frame.payload.code === ErrorCode.NOT_STREAMING &&
    frame.payload.refType === 'CPP_STREAM_STOP'
  );
}

/** The server's answer to a stop of a node that ended by itself before the stop arrived. */
function notStreaming(frame: ServerFrame, frameId: string): boolean {
  return (
    frame.type === 'CPP_ERROR' && frame.payload.refId === frameId && frame.payload.code === ErrorCode.NOT_STREAMING
  );
}

/** The CPP_TOOL_CALL that shows a client's answer to a call taken: the call has left `input-available`. */
function answered(reply: ServerFrame, toolCallId: string): Answer<void> {
  return reply.type === 'CPP_TOOL_CALL' &&
    reply.payload.toolCall.toolCallId === toolCallId &&
    reply.payload.toolCall.state !== 'input-available'
    ? { value: undefined }
    : undefined;
}

function holdsFiles(item: unknown): boolean {
  return typeof item === 'object' && item !== null && 'files' in item;
}
