import type { CPPClient, GenerationResult, NamedBytes } from '@promethea/cpp-client';
import { getNode, isThreadId, streamingNode, type MessageNode, type ThreadGraph } from '@promethea/cpp-protocol';
import { isToolUIPart, type ChatTransport, type FinishReason, type UIMessage, type UIMessageChunk } from 'ai';
import { AnswerStream } from './answer-stream.js';
import { type AnswerView, emptyView, showNode, viewOfMessage, waitsOnPage } from './tool-parts.js';

export interface CPPChatTransportOptions {
  /** A connected client (`@promethea/cpp-client`), with whatever identity the server asks for. */
  client: CPPClient;
  /**
   * The CPP thread of a chat. Default: the chat's id when it is a thread id (`thread_…`), else `thread_` + the
   * chat's id (useChat's generated ids are valid thread ids then).
   */
  threadId?: (chatId: string) => string;
  /**
   * The server's model (an id of `client.models()`) that answers a request whose `body` names none; a request
   * chooses its own with `body: { model }` (useChat's `sendMessage(message, { body })`, `regenerate({ body })`).
   * Default: the server's default model.
   */
  model?: string;
}

type SendOptions<Message extends UIMessage> = Parameters<ChatTransport<Message>['sendMessages']>[0];

/**
 * `useChat`'s transport to a CPP server (AI SDK 6). Each chat is a CPP thread, and each answer is streamed as the
 * assistant message whose id is its node's id, its reasoning (from a model that reasons) as reasoning parts and its
 * tool calls (PROTOCOL.md §26) as tool parts:
 * - `sendMessage` while an answer streams **pivots**: the answer is cut where the page had shown it, and the new
 *   prompt branches beneath it (PROTOCOL.md §3.1.A); otherwise it prompts under the head. Sending with the
 *   `messageId` of an earlier user message edits it (§24.2).
 * - `regenerate` asks CPP for a new answer beside the earlier ones (§24.1), halting one that still streams.
 * - `stop` halts the answer where the page had shown it (CPP_STREAM_STOP); the partial text stays in the tree.
 * - A message's `file` parts (`sendMessage({ text, files })`) are uploaded, and the prompt carries them (§27).
 * - `resumeStream` (useChat's `resume: true`, after a reload) streams the thread's answer in progress, from its
 *   beginning (`resumeStreamIsReplay`), then as it goes on.
 * - Tool calls: the server's own tools are `providerExecuted` parts that run and end by themselves. When the answer
 *   waits for nothing but the page — a call in `approval-requested`, or a call of a client tool this transport's
 *   client has no handler of (useChat's `onToolCall` gets it) — the message's stream finishes (`tool-calls`), as the
 *   AI SDK's own streams do, while the CPP answer waits. `addToolApprovalResponse` and `addToolOutput` then send
 *   (with `sendAutomaticallyWhen`, or `sendMessage()`) the message back: the transport gives the server each answer
 *   (CPP_TOOL_APPROVAL, CPP_TOOL_RESULT) and streams the same answer on. An interrupted call is an `output-error`.
 */
export class CPPChatTransport<Message extends UIMessage = UIMessage> implements ChatTransport<Message> {
  readonly resumeStreamIsReplay = true;
  private readonly client: CPPClient;
  private readonly threadOf: (chatId: string) => string;
  private readonly model: string | undefined;
  /** What the page has been shown of each answer this transport streams: what a pivot or stop keeps of it. */
  private readonly views = new Map<string, AnswerView>();
  /** Answers this transport has halted: nothing more of them is shown until they end, cut at what was shown. */
  private readonly halting = new Set<string>();
  /** The CPP user node of each user message useChat named itself (its own ids are not node ids). */
  private readonly userNodes = new Map<string, string>();

  constructor(options: CPPChatTransportOptions) {
    this.client = options.client;
    this.threadOf = options.threadId ?? defaultThreadId;
    this.model = options.model;
  }

  async sendMessages(options: SendOptions<Message>): Promise<ReadableStream<UIMessageChunk>> {
    const threadId = this.threadOf(options.chatId);
    const graph = await this.open(threadId);
    const stream = new AnswerStream();
    const last = options.messages.at(-1);
    if (options.trigger === 'submit-message' && last?.role === 'assistant') {
      this.answerTools(stream, threadId, last, options.abortSignal);
      return stream.readable;
    }
    let nodeId: string | undefined;
    // The answer is the thread's next streaming node that this transport is not halting (one streams at a time).
    this.follow(stream, threadId, undefined, new Set(), (node) => {
      nodeId = node.id;
      if (last !== undefined && node.parentId !== null) this.userNodes.set(last.id, node.parentId);
    });
    const request = this.request(options, threadId, graph);
    this.stopOnAbort(options.abortSignal, stream, threadId, () => nodeId);
    request.then(
      (result) => {
        const view = this.viewOf(result.assistantNodeId);
        this.forget(result.assistantNodeId);
        if (stream.closed) return; // the page answers the answer's tools, or stopped reading
        stream.start(result.assistantNodeId);
        const node = getNode(this.client.graph(threadId) ?? graph, result.assistantNodeId);
        if (node) showNode(stream, node, view);
        stream.finish(finishReason(result));
      },
      (error: unknown) => stream.fail(error),
    );
    return stream.readable;
  }

  /** The thread's answer in progress, replayed from its first character and followed to its end; `null` if none. */
  async reconnectToStream(options: { chatId: string }): Promise<ReadableStream<UIMessageChunk> | null> {
    const threadId = this.threadOf(options.chatId);
    await this.open(threadId);
    const node = this.client.streamingNode(threadId);
    if (!node) return null;
    const stream = new AnswerStream();
    this.views.set(node.id, emptyView());
    this.follow(stream, threadId, node.id)();
    return stream.readable;
  }

  /**
   * The page answered the tool calls of `message` (approvals, client tools' outputs): the server is given each answer
   * it still waits for, and the answer streams on, from what the message shows.
   */
  private answerTools(
    stream: AnswerStream,
    threadId: string,
    message: UIMessage,
    signal: AbortSignal | undefined,
  ): void {
    const node = getNode(this.client.graph(threadId)!, message.id);
    if (!node) {
      stream.fail(new Error(`the thread has no answer ${message.id} to go on with`));
      return;
    }
    const calls = new Map((node.toolCalls ?? []).map((call) => [call.toolCallId, call]));
    const answered = new Set<string>();
    for (const part of message.parts) {
      const call = 'toolCallId' in part ? calls.get(part.toolCallId) : undefined;
      if (!call || !isToolUIPart(part)) continue;
      const target = { threadId, nodeId: node.id, toolCallId: call.toolCallId };
      // The server's answer (the call's next state, or CONFLICT/NOT_STREAMING when it no longer waits) is in the mirror.
      let answer: Promise<unknown> | undefined;
      if (part.state === 'approval-responded' && call.state === 'approval-requested')
        answer = this.client.respondToToolCall({ ...target, ...part.approval });
      else if (call.state === 'input-available' && call.runsOn === 'client' && part.state === 'output-available')
        answer = this.client.answerToolCall({ ...target, output: part.output });
      else if (call.state === 'input-available' && call.runsOn === 'client' && part.state === 'output-error')
        answer = this.client.answerToolCall({ ...target, errorText: part.errorText });
      if (answer) {
        answered.add(call.toolCallId);
        answer.catch(() => undefined);
      }
    }
    this.views.set(node.id, viewOfMessage(message, node));
    this.stopOnAbort(signal, stream, threadId, () => node.id);
    this.follow(stream, threadId, node.id, answered)();
  }

  /**
   * Streams an answer to `stream` from the thread's mirror as it changes: `nodeId`'s, or the next one to stream
   * (then `discovered` is told of it). The stream finishes when the answer waits for the page's tool answers (other
   * than the `answered` calls, which the server is being given), or
   * (`nodeId` given) when the answer ends; otherwise the request's end finishes it. Returns a function that shows
   * what is there now.
   */
  private follow(
    stream: AnswerStream,
    threadId: string,
    nodeId: string | undefined,
    answered: ReadonlySet<string> = new Set(),
    discovered?: (node: MessageNode) => void,
  ): () => void {
    const endsWithAnswer = nodeId !== undefined;
    const update = () => {
      const graph = this.client.graph(threadId);
      if (!graph) return;
      if (nodeId === undefined) {
        const streaming = streamingNode(graph);
        if (!streaming || this.halting.has(streaming.id)) return;
        nodeId = streaming.id;
        this.views.set(nodeId, this.views.get(nodeId) ?? emptyView());
        discovered?.(streaming);
      }
      const node = getNode(graph, nodeId);
      // A node being halted shows nothing until it ends, cut where the page had it.
      if (!node || (node.status === 'streaming' && this.halting.has(node.id))) return;
      if (node.status === 'streaming' || endsWithAnswer) {
        stream.start(node.id);
        showNode(stream, node, this.viewOf(node.id));
      }
      if (node.status !== 'streaming' && endsWithAnswer) {
        this.forget(node.id);
        stream.finish(node.status === 'failed' ? 'error' : 'stop');
      } else if (node.status === 'streaming' && waitsOnPage(node, (name) => this.client.handlesTool(name), answered))
        stream.finish('tool-calls');
    };
    const listener = (event: { threadId: string }) => {
      if (stream.closed) this.client.off('graph', listener);
      else if (event.threadId === threadId) update();
    };
    this.client.on('graph', listener);
    return update;
  }

  /** useChat's stop: the answer is halted where the page had it, and the stream ends at once. */
  private stopOnAbort(
    signal: AbortSignal | undefined,
    stream: AnswerStream,
    threadId: string,
    nodeId: () => string | undefined,
  ): void {
    signal?.addEventListener('abort', () => {
      const id = nodeId();
      if (id !== undefined && this.client.streamingNode(threadId)?.id === id) {
        const received = this.received(id);
        this.halting.add(id);
        this.client.stop({ threadId, ...received }).catch(() => undefined);
      }
      stream.close();
    });
  }

  private viewOf(nodeId: string): AnswerView {
    let view = this.views.get(nodeId);
    if (!view) this.views.set(nodeId, (view = emptyView()));
    return view;
  }

  private forget(nodeId: string): void {
    this.views.delete(nodeId);
    this.halting.delete(nodeId);
  }

  private request(options: SendOptions<Message>, threadId: string, graph: ThreadGraph): Promise<GenerationResult> {
    const streaming = this.client.streamingNode(threadId);
    const received = streaming && this.received(streaming.id);
    if (streaming) this.halting.add(streaming.id);
    const model = requestedModel(options.body) ?? this.model;
    const answering = { model };
    if (options.trigger === 'regenerate-message') {
      // useChat names the answer it regenerates (or none: the last one); the head is that answer or its prompt.
      const nodeId =
        options.messageId !== undefined && getNode(graph, options.messageId) ? options.messageId : undefined;
      return this.client.regenerate({
        threadId,
        ...answering,
        ...received,
        nodeId,
      });
    }
    const userPrompt = textOf(options.messages.at(-1));
    const { messageId } = options;
    return filesOf(options.messages.at(-1)).then((attachments) => {
      // A message of files alone may have no text (PROTOCOL.md §6.5); one of neither says nothing.
      if (userPrompt === '' && attachments === undefined)
        throw new TypeError('the message to send has no text and no file: a CPP prompt says something');
      if (messageId !== undefined) {
        const nodeId = this.userNodes.get(messageId) ?? messageId;
        return this.client.edit({ threadId, nodeId, userPrompt, attachments, ...answering });
      }
      if (streaming) return this.client.pivot({ threadId, userPrompt, attachments, ...received, ...answering });
      return this.client.prompt({ threadId, userPrompt, attachments, ...answering });
    });
  }

  /** What the page was shown of a streaming answer, as a pivot, stop or regenerate says it: where to cut it. */
  private received(nodeId: string): { receivedContentLength: number; receivedReasoningLength: number } {
    const shown = this.views.get(nodeId) ?? emptyView();
    return { receivedContentLength: shown.content, receivedReasoningLength: shown.reasoning };
  }

  private async open(threadId: string): Promise<ThreadGraph> {
    return this.client.graph(threadId) ?? (await this.client.openThread(threadId));
  }
}

function defaultThreadId(chatId: string): string {
  const threadId = chatId.startsWith('thread_') ? chatId : `thread_${chatId}`;
  if (!isThreadId(threadId))
    throw new TypeError(`chat id ${JSON.stringify(chatId)} makes no CPP thread id: pass options.threadId`);
  return threadId;
}

/** The model a request's `body` names, if any. */
function requestedModel(body: object | undefined): string | undefined {
  const model: unknown = body && 'model' in body ? body.model : undefined;
  if (model !== undefined && typeof model !== 'string')
    throw new TypeError(`body.model must be a model id (a string), not ${JSON.stringify(model)}`);
  return model;
}

function textOf(message: UIMessage | undefined): string {
  return (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
}

/**
 * The message's `file` parts (what `sendMessage({ text, files })` makes of a file input: `data:` URLs, or any URL the
 * page can fetch) as files the prompt carries (PROTOCOL.md §27), each uploaded by the client before the prompt.
 */
async function filesOf(message: UIMessage | undefined): Promise<NamedBytes[] | undefined> {
  const parts = (message?.parts ?? []).flatMap((part) => (part.type === 'file' ? [part] : []));
  if (parts.length === 0) return undefined;
  return Promise.all(
    parts.map(async (part) => ({ name: part.filename ?? 'file', bytes: await (await fetch(part.url)).blob() })),
  );
}

/** CPP's finish reasons are the AI SDK's own; an answer cut by a pivot or a stop ends as `stop`. */
function finishReason(result: GenerationResult): FinishReason {
  return result.status === 'failed' ? 'error' : (result.finishReason ?? 'stop');
}
