import type { CPPClient, GenerationResult, NamedBytes } from '@promethea/cpp-client';
import { getNode, isThreadId, partText, type ThreadGraph } from '@promethea/cpp-protocol';
import type { ChatTransport, FinishReason, UIMessage, UIMessageChunk } from 'ai';
import { AnswerStream } from './answer-stream.js';

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

/** How much of an answer's two texts the page has been given. */
interface Shown {
  content: number;
  reasoning: number;
}

/** What each request streams to: the answer's text and the model's reasoning. */
interface StreamHandlers {
  onStream: (delta: string) => void;
  onReasoning: (delta: string) => void;
}

/**
 * `useChat`'s transport to a CPP server (AI SDK 6). Each chat is a CPP thread, and each answer is streamed as the
 * assistant message whose id is its node's id, its reasoning (from a model that reasons) as reasoning parts:
 * - `sendMessage` while an answer streams **pivots**: the answer is cut where the page had shown it, and the new
 *   prompt branches beneath it (PROTOCOL.md §3.1.A); otherwise it prompts under the head. Sending with the
 *   `messageId` of an earlier user message edits it (§24.2).
 * - `regenerate` asks CPP for a new answer beside the earlier ones (§24.1), halting one that still streams.
 * - `stop` halts the answer where the page had shown it (CPP_STREAM_STOP); the partial text stays in the tree.
 * - A message's `file` parts (`sendMessage({ text, files })`) are uploaded, and the prompt carries them (§27).
 * - `resumeStream` (useChat's `resume: true`, after a reload) streams the thread's answer in progress, from its
 *   beginning (`resumeStreamIsReplay`), then as it goes on.
 */
export class CPPChatTransport<Message extends UIMessage = UIMessage> implements ChatTransport<Message> {
  readonly resumeStreamIsReplay = true;
  private readonly client: CPPClient;
  private readonly threadOf: (chatId: string) => string;
  private readonly model: string | undefined;
  /** How much of each answer this transport has handed to the page: what a pivot or stop keeps of it. */
  private readonly shown = new Map<string, Shown>();
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
    const lastMessageId = options.messages.at(-1)?.id;
    let nodeId: string | undefined;
    const show = (part: keyof Shown) => (delta: string) => {
      nodeId ??= this.opened(stream, threadId, lastMessageId);
      if (nodeId !== undefined) this.show(stream, nodeId, part, delta);
    };
    const request = this.request(options, threadId, graph, {
      onStream: show('content'),
      onReasoning: show('reasoning'),
    });
    options.abortSignal?.addEventListener('abort', () => {
      if (nodeId !== undefined && this.client.streamingNode(threadId)?.id === nodeId)
        this.client.stop({ threadId, ...this.received(nodeId) }).catch(() => undefined);
      stream.close();
    });
    request.then(
      (result) => {
        stream.start(result.assistantNodeId);
        stream.finish(finishReason(result));
        this.shown.delete(result.assistantNodeId);
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
    stream.start(node.id);
    this.shown.set(node.id, { content: 0, reasoning: 0 });
    const follow = (event: { threadId: string; graph: ThreadGraph }) => {
      const now = event.threadId === threadId ? getNode(event.graph, node.id) : undefined;
      if (!now) return;
      const shown = this.shown.get(node.id)!;
      this.show(stream, node.id, 'reasoning', partText(now, 'reasoning').slice(shown.reasoning));
      this.show(stream, node.id, 'content', now.content.slice(shown.content));
      if (now.status === 'streaming') return;
      this.client.off('graph', follow);
      this.shown.delete(node.id);
      stream.finish(now.status === 'failed' ? 'error' : 'stop');
    };
    follow({ threadId, graph: this.client.graph(threadId)! });
    this.client.on('graph', follow);
    return stream.readable;
  }

  private request(
    options: SendOptions<Message>,
    threadId: string,
    graph: ThreadGraph,
    handlers: StreamHandlers,
  ): Promise<GenerationResult> {
    const streaming = this.client.streamingNode(threadId);
    const received = streaming && this.received(streaming.id);
    const model = requestedModel(options.body) ?? this.model;
    const answering = { ...handlers, model };
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
    const shown = this.shown.get(nodeId) ?? { content: 0, reasoning: 0 };
    return { receivedContentLength: shown.content, receivedReasoningLength: shown.reasoning };
  }

  /** The answer's first text: its node is the one streaming now; the page's message becomes that node. */
  private opened(stream: AnswerStream, threadId: string, userMessageId: string | undefined): string | undefined {
    const node = this.client.streamingNode(threadId);
    if (!node) return undefined;
    stream.start(node.id);
    this.shown.set(node.id, { content: 0, reasoning: 0 });
    if (userMessageId !== undefined && node.parentId !== null) this.userNodes.set(userMessageId, node.parentId);
    return node.id;
  }

  private show(stream: AnswerStream, nodeId: string, part: keyof Shown, delta: string): void {
    if (part === 'content') stream.text(delta);
    else stream.reasoning(delta);
    const shown = this.shown.get(nodeId);
    if (shown) shown[part] += delta.length;
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
  const text = (message?.parts ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
  if (text === '') throw new TypeError('the message to send has no text: CPP prompts are text');
  return text;
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
