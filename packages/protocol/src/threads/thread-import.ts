import { z } from 'zod';
import { newMessageId, newThreadId, newToolCallId } from '../ids.js';
import type { MessageNode, Role } from '../node.js';
import { findInvariantViolations } from '../tree/invariants.js';
import type { ToolCall } from '../tree/tool-calls.js';
import { firstPrompts, getNode, rootOf, type ThreadGraph } from '../tree/thread-graph.js';
import { THREAD_TITLE_MAX_LENGTH, type ImportFormat } from '../frames/client-frames.js';
import { safeCutLength, storableText } from '../text.js';
import { ThreadExportSchema } from './thread-export-schema.js';

/** A thread read from an import document, with ids of its own: ready to be stored under its owner. */
export interface ImportedThread {
  title: string;
  createdAt: number;
  updatedAt: number;
  /** Version 0; every id is new, since the ids of the document may be in use (by the thread it was exported from). */
  graph: ThreadGraph;
  /**
   * CPP JSON: the bytes the document holds of the files its messages carry, base64 by SHA-256. A message's files
   * still have the document's ids: an importer keeps the bytes and gives the message the files it kept
   * (docs/PROTOCOL.md §25.5).
   */
  files?: Record<string, string>;
  /**
   * ChatGPT: the images each message showed (by the message's new id), as the export names them (`file-…`, from an
   * `image_asset_pointer`); their bytes are files of the export's archive whose names begin with these ids.
   */
  imageFileIds?: Record<string, string[]>;
}

/** What is wrong with an import document, naming where: nothing of the document is imported. */
export class ImportDocumentError extends Error {
  override readonly name = 'ImportDocumentError';
}

/**
 * Every thread of an import document, in the document's order, or `ImportDocumentError` when any part of it is
 * malformed. `now` dates what the document leaves undated.
 */
export function readImportDocument(format: ImportFormat, document: unknown, now: number): ImportedThread[] {
  const threads = format === 'cpp-thread' ? readThreadExports(document) : readChatGptExport(document, now);
  return threads.map(storable);
}

/**
 * The threads of one element of an import document's array, `index` its place (0-based), read and named in errors
 * as `readImportDocument` reads and names it: a reader of a document too large to hold reads it element by element.
 * A CPP JSON export that is not in an array is its own element 0.
 */
export function readImportItem(format: ImportFormat, item: unknown, index: number, now: number): ImportedThread[] {
  const threads =
    format === 'cpp-thread' ? [readThreadExportItem(item, index)] : readChatGptConversation(item, index, now);
  return threads.map(storable);
}

/**
 * A thread whose text every store keeps as it is (`storableText`): a document is not checked as a prompt is, and a
 * lone surrogate or NUL in it would otherwise come back changed after a restart, or not be stored at all. A title
 * as long as a user may give one.
 */
function storable(thread: ImportedThread): ImportedThread {
  const title = storableText(thread.title);
  const nodes: Record<string, MessageNode> = {};
  for (const [id, node] of Object.entries(thread.graph.nodes)) {
    const toolCalls = node.toolCalls?.map((call) => ({
      ...call,
      input: storableText(call.input),
      ...(call.output !== undefined && { output: storableText(call.output) }),
      ...(call.errorText !== undefined && { errorText: storableText(call.errorText) }),
    }));
    nodes[id] = { ...node, content: storableText(node.content), ...(toolCalls && { toolCalls }) };
  }
  return {
    ...thread,
    title: title.slice(0, safeCutLength(title, THREAD_TITLE_MAX_LENGTH)),
    graph: { ...thread.graph, nodes },
  };
}

// --- CPP JSON --------------------------------------------------------------------------------------------------

/** One export, or a list of them. */
function readThreadExports(document: unknown): ImportedThread[] {
  const parsed = Array.isArray(document)
    ? z.array(ThreadExportSchema).safeParse(document)
    : ThreadExportSchema.safeParse(document);
  if (!parsed.success) throw new ImportDocumentError(`not a CPP thread export: ${describeIssue(parsed.error)}`);
  const exports = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
  return exports.map(threadOfExport);
}

function readThreadExportItem(item: unknown, index: number): ImportedThread {
  const parsed = ThreadExportSchema.safeParse(item);
  if (!parsed.success)
    throw new ImportDocumentError(`not a CPP thread export: ${describeIssue(parsed.error, [index])}`);
  return threadOfExport(parsed.data, index);
}

function threadOfExport(
  { thread, exportedAt, files }: z.infer<typeof ThreadExportSchema>,
  index: number,
): ImportedThread {
  const graph: ThreadGraph = {
    threadId: thread.threadId,
    rootNodeId: thread.rootNodeId,
    activeHeadMessageId: thread.activeHeadMessageId,
    version: 0,
    nodes: thread.nodes,
  };
  const violations = findInvariantViolations(graph);
  if (violations.length > 0)
    throw new ImportDocumentError(`thread ${index + 1} (${thread.threadId}) is not a sound tree: ${violations[0]}`);
  const createdAt = Object.values(thread.nodes).reduce(
    (earliest, node) => Math.min(earliest, node.createdAt),
    exportedAt,
  );
  return {
    title: thread.title,
    createdAt,
    updatedAt: exportedAt,
    graph: withNewIds(graph),
    ...(files ? { files } : {}),
  };
}

/**
 * The same tree under new ids. A node still `streaming` in the document is `interrupted` here: no generation
 * writes it any more.
 */
function withNewIds(graph: ThreadGraph): ThreadGraph {
  const ids = new Map(Object.keys(graph.nodes).map((id) => [id, newMessageId()]));
  const newId = (id: string) => ids.get(id)!;
  const nodes: Record<string, MessageNode> = {};
  for (const node of Object.values(graph.nodes)) {
    const id = newId(node.id);
    const status = node.status === 'streaming' ? 'interrupted' : node.status;
    nodes[id] = {
      ...node,
      id,
      parentId: node.parentId === null ? null : newId(node.parentId),
      childrenIds: node.childrenIds.map(newId),
      status,
    };
  }
  const rootNodeId = graph.rootNodeId === null ? null : newId(graph.rootNodeId);
  const activeHeadMessageId = graph.activeHeadMessageId === null ? null : newId(graph.activeHeadMessageId);
  return { threadId: newThreadId(), rootNodeId, activeHeadMessageId, version: 0, nodes };
}

// --- ChatGPT conversations.json ---------------------------------------------------------------------------------

/** Seconds since the epoch, with a fraction, or null. */
const SecondsSchema = z.number().nonnegative().nullish();

/** The parts of a ChatGPT export the import reads; whatever else a conversation or message holds is ignored. */
const ChatGptMessageSchema = z.object({
  author: z.object({ role: z.string(), name: z.string().nullish() }),
  create_time: SecondsSchema,
  content: z.object({
    content_type: z.string(),
    parts: z.array(z.unknown()).optional(),
    // A code cell's, a code run's or a quote's text; a browsing result's text.
    text: z.string().nullish(),
    result: z.string().nullish(),
  }),
  /** Who the message is for: `all` (the conversation), or the tool an assistant message calls. */
  recipient: z.string().nullish(),
  metadata: z
    .object({ model_slug: z.string().nullish(), is_visually_hidden_from_conversation: z.boolean().nullish() })
    .nullish(),
});

const ChatGptNodeSchema = z.object({
  message: ChatGptMessageSchema.nullish(),
  parent: z.string().nullish(),
  children: z.array(z.string()),
});

const ChatGptConversationSchema = z.object({
  title: z.string().nullish(),
  create_time: SecondsSchema,
  update_time: SecondsSchema,
  mapping: z.record(z.string(), ChatGptNodeSchema),
  current_node: z.string().nullish(),
});

const ChatGptExportSchema = z.array(ChatGptConversationSchema);

type ChatGptConversation = z.infer<typeof ChatGptConversationSchema>;
type ChatGptMessage = z.infer<typeof ChatGptMessageSchema>;

/** The content types that are a message's text; the others (code run, browsing, reasoning, …) are tools' parts. */
const TEXT_CONTENT_TYPES = new Set(['text', 'multimodal_text']);

/**
 * A ChatGPT data export's `conversations.json`: each conversation becomes a thread with the same tree of user and
 * assistant messages, in the same order, and its `current_node` as the head. An answer that used tools is one
 * assistant node with tool calls (PROTOCOL.md §25.5): see `ToolTurns`. System messages, hidden messages, and messages
 * without text (an image alone) are skipped: their children hang from the nearest message kept above them. When the
 * kept messages have several roots (the first prompt was edited), they are the thread's first prompts, siblings as
 * any edited prompt's versions are.
 */
function readChatGptExport(document: unknown, now: number): ImportedThread[] {
  const parsed = ChatGptExportSchema.safeParse(document);
  if (!parsed.success)
    throw new ImportDocumentError(`not a ChatGPT conversations.json: ${describeIssue(parsed.error)}`);
  return parsed.data.flatMap((conversation, index) => namedConversation(conversation, index, now));
}

function readChatGptConversation(item: unknown, index: number, now: number): ImportedThread[] {
  const parsed = ChatGptConversationSchema.safeParse(item);
  if (!parsed.success)
    throw new ImportDocumentError(`not a ChatGPT conversations.json: ${describeIssue(parsed.error, [index])}`);
  return namedConversation(parsed.data, index, now);
}

function namedConversation(conversation: ChatGptConversation, index: number, now: number): ImportedThread[] {
  const name = `conversation ${index + 1}${conversation.title ? ` (${conversation.title})` : ''}`;
  try {
    return readConversation(conversation, now);
  } catch (error) {
    if (error instanceof ImportDocumentError) throw new ImportDocumentError(`${name}: ${error.message}`);
    throw error;
  }
}

function readConversation(conversation: ChatGptConversation, now: number): ImportedThread[] {
  const { mapping } = conversation;
  const tops = checkMapping(mapping);
  const createdAt = toMilliseconds(conversation.create_time) ?? now;
  const updatedAt = toMilliseconds(conversation.update_time) ?? createdAt;
  const title = (conversation.title ?? '').trim();

  // Kept messages by their mapping key, with their kept children in mapping order.
  const kept = new Map<string, MessageNode>();
  const roots: MessageNode[] = [];
  const turns = new ToolTurns();
  const imageFileIds: Record<string, string[]> = {};
  // Depth first and without recursion: a conversation may be deeper than the call stack.
  const stack: Array<{ key: string; keptParent: MessageNode | undefined }> = tops
    .reverse()
    .map((key) => ({ key, keptParent: undefined }));
  while (stack.length > 0) {
    const { key, keptParent } = stack.pop()!;
    const node = mapping[key]!;
    const time = toMilliseconds(node.message?.create_time) ?? createdAt;
    const linear = node.parent ? mapping[node.parent]!.children.length === 1 : false;
    const toolPart = node.message ? turns.take(node.message, keptParent, linear, time) : undefined;
    const message = node.message && !toolPart ? keptMessage(node.message) : undefined;
    let parent = keptParent;
    if (toolPart) {
      parent = toolPart;
      if (toolPart !== keptParent) {
        if (keptParent) keptParent.childrenIds.push(toolPart.id);
        else roots.push(toolPart);
      }
      kept.set(key, toolPart);
    } else if (message && turns.continues(keptParent, message, linear)) {
      parent = turns.append(keptParent!, message.text);
      kept.set(key, parent);
    } else if (message) {
      const created: MessageNode = {
        id: newMessageId(),
        parentId: keptParent?.id ?? null,
        childrenIds: [],
        role: message.role,
        content: message.text,
        status: 'completed',
        createdAt: time,
        ...(message.model ? { model: message.model } : {}),
      };
      kept.set(key, created);
      if (message.images.length > 0) imageFileIds[created.id] = message.images;
      if (keptParent) keptParent.childrenIds.push(created.id);
      else roots.push(created);
      parent = created;
    }
    for (const child of [...node.children].reverse()) stack.push({ key: child, keptParent: parent });
  }
  turns.end();
  if (roots.length === 0)
    return [
      {
        title,
        createdAt,
        updatedAt,
        graph: { threadId: newThreadId(), rootNodeId: null, activeHeadMessageId: null, version: 0, nodes: {} },
      },
    ];

  // Several kept roots are the versions of an edited first prompt: siblings in one thread (docs/PROTOCOL.md §24.2).
  const nodes: Record<string, MessageNode> = {};
  for (const node of kept.values()) nodes[node.id] = node;
  const graph: ThreadGraph = {
    threadId: newThreadId(),
    rootNodeId: null,
    activeHeadMessageId: null,
    version: 0,
    nodes,
  };
  const head =
    keptAncestor(mapping, kept, conversation.current_node ?? undefined) ??
    newestLeaf(graph, firstPrompts(graph).at(-1)!);
  graph.activeHeadMessageId = head.id;
  graph.rootNodeId = rootOf(graph, head.id)!.id;
  return [{ title, createdAt, updatedAt, graph, ...(Object.keys(imageFileIds).length > 0 ? { imageFileIds } : {}) }];
}

/**
 * Takes a message out of an imported thread, its children hanging from its parent in its place, as the reader
 * leaves out a message without text: a ChatGPT prompt of images alone none of whose images came (docs/PROTOCOL.md
 * §25.5). The head, when it was this message, is its parent, or else the newest branch's end, as when
 * `current_node` has no message kept above it.
 */
export function dropImportedMessage(thread: ImportedThread, nodeId: string): void {
  const { graph } = thread;
  const node = graph.nodes[nodeId];
  if (!node) return;
  const parent = node.parentId === null ? undefined : graph.nodes[node.parentId];
  for (const childId of node.childrenIds) graph.nodes[childId]!.parentId = node.parentId;
  parent?.childrenIds.splice(parent.childrenIds.indexOf(nodeId), 1, ...node.childrenIds);
  delete graph.nodes[nodeId];
  delete thread.imageFileIds?.[nodeId];
  const tops = firstPrompts(graph);
  if (tops.length === 0) {
    graph.rootNodeId = null;
    graph.activeHeadMessageId = null;
    return;
  }
  if (graph.activeHeadMessageId === nodeId) graph.activeHeadMessageId = (parent ?? newestLeaf(graph, tops.at(-1)!)).id;
  graph.rootNodeId = rootOf(graph, graph.activeHeadMessageId!)!.id;
}

/**
 * Checks that the mapping is one sound forest (parents and children agree, every key resolves, no cycle) and
 * returns its tops: the nodes without a parent.
 */
function checkMapping(mapping: ChatGptConversation['mapping']): string[] {
  const keys = Object.keys(mapping);
  const tops = keys.filter((key) => !mapping[key]!.parent);
  for (const key of keys) {
    const { parent, children } = mapping[key]!;
    if (parent) {
      if (!Object.hasOwn(mapping, parent))
        throw new ImportDocumentError(`node ${key} names parent ${parent}, which is not in the mapping`);
      if (!mapping[parent]!.children.includes(key))
        throw new ImportDocumentError(`node ${key} names parent ${parent}, which does not list it as a child`);
    }
    for (const child of children) {
      if (!Object.hasOwn(mapping, child))
        throw new ImportDocumentError(`node ${key} lists child ${child}, which is not in the mapping`);
      if (mapping[child]!.parent !== key)
        throw new ImportDocumentError(
          `node ${key} lists child ${child}, whose parent is ${mapping[child]!.parent ?? 'none'}`,
        );
    }
    if (new Set(children).size !== children.length) throw new ImportDocumentError(`node ${key} lists a child twice`);
  }
  // Every node reached once from the tops: anything left over sits on a cycle.
  let reached = 0;
  const stack = [...tops];
  while (stack.length > 0) {
    reached += 1;
    stack.push(...mapping[stack.pop()!]!.children);
  }
  if (reached !== keys.length)
    throw new ImportDocumentError(`${keys.length - reached} nodes of the mapping are on a cycle`);
  return tops;
}

interface KeptMessage {
  role: Role;
  text: string;
  model: string | undefined;
  /** The file ids of the images among its parts. */
  images: string[];
}

function keptMessage(message: ChatGptMessage): KeptMessage | undefined {
  const role = message.author.role;
  if (role !== 'user' && role !== 'assistant') return undefined;
  if (message.metadata?.is_visually_hidden_from_conversation) return undefined;
  if (!TEXT_CONTENT_TYPES.has(message.content.content_type)) return undefined;
  // Parts that are not text (images, files) and empty strings (ChatGPT leaves some) add nothing, not a blank line.
  const text = (message.content.parts ?? [])
    .filter((part): part is string => typeof part === 'string' && part !== '')
    .join('\n\n');
  const images = (message.content.parts ?? []).flatMap(imageFileId);
  // A prompt of images alone is kept, its text empty, for the importer to give it its images or take it out
  // (`dropImportedMessage`) when none came (docs/PROTOCOL.md §25.5).
  if (text.trim() === '' && (role !== 'user' || images.length === 0)) return undefined;
  const model = role === 'assistant' ? (message.metadata?.model_slug ?? undefined) : undefined;
  return { role, text, model, images };
}

/**
 * The file id of an image part, `{"content_type": "image_asset_pointer", "asset_pointer": "file-service://file-…"}`
 * (`sediment://file_…` in newer exports): what follows the scheme.
 */
function imageFileId(part: unknown): string[] {
  if (typeof part !== 'object' || part === null) return [];
  const { content_type: type, asset_pointer: pointer } = part as Record<string, unknown>;
  if (type !== 'image_asset_pointer' || typeof pointer !== 'string') return [];
  const id = pointer.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  return /^[\w-]+$/.test(id) ? [id] : [];
}

/** What a tool's result holds that is text, by content type; `system_error` is the call's error. */
function resultText(message: ChatGptMessage): string {
  const { content } = message;
  const parts = (content.parts ?? []).filter((part): part is string => typeof part === 'string' && part !== '');
  return content.text ?? content.result ?? parts.join('\n\n');
}

/** A tool call's input as the JSON text of an object: a code cell's code, an object as it is, other text wrapped. */
function callInput(message: ChatGptMessage): string {
  if (message.content.content_type === 'code') return JSON.stringify({ code: message.content.text ?? '' });
  const text = resultText(message);
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return JSON.stringify(parsed);
  } catch {
    // Not JSON: the text itself is the input.
  }
  return JSON.stringify({ text });
}

/**
 * ChatGPT keeps an answer that used tools as several messages: an assistant message to a tool (`recipient` the
 * tool's name: `python`, `browser`, `dalle.text2im`, …; `content_type` `code` or text), the tool's result (author
 * role `tool`: `execution_output`, `tether_browsing_display`, `tether_quote`, text, `system_error`), and the
 * assistant's text after it. CPP keeps an answer as one node with its calls as parts (PROTOCOL.md §26.1), so each
 * call joins the assistant node above it (or a new, empty one under the prompt), its result fills the call in, and
 * the assistant's text after a result is that node's text, a new step. Only a line of messages is joined: a message
 * with siblings (an answer written again after a tool ran) stays a node of its own, as before.
 */
class ToolTurns {
  /** The nodes that hold calls, and whether their last call's result came after the last text or call. */
  private readonly hosts = new Map<MessageNode, { step: number; afterResult: boolean }>();

  /** The node a call or a tool's result of `message` joins (a new node for a call under a prompt); none otherwise. */
  take(
    message: ChatGptMessage,
    parent: MessageNode | undefined,
    linear: boolean,
    time: number,
  ): MessageNode | undefined {
    if (message.metadata?.is_visually_hidden_from_conversation) return undefined;
    const isCall = message.author.role === 'assistant' && !!message.recipient && message.recipient !== 'all';
    if (isCall) return this.call(message, parent, linear, time);
    if (message.author.role !== 'tool' || !parent || !linear) return undefined;
    const host = this.hosts.get(parent);
    const call = parent.toolCalls?.filter((pending) => pending.state === 'input-available').at(-1);
    if (!host || !call) return undefined;
    const text = resultText(message);
    if (message.content.content_type === 'system_error')
      Object.assign(call, { state: 'output-error', errorText: text });
    else Object.assign(call, { state: 'output-available', output: text });
    host.afterResult = true;
    return parent;
  }

  /** Whether `message`, an assistant's text, goes on the answer `parent` after its tools' results. */
  continues(parent: MessageNode | undefined, message: { role: Role }, linear: boolean): boolean {
    return (
      message.role === 'assistant' && linear && parent !== undefined && this.hosts.get(parent)?.afterResult === true
    );
  }

  /** `text` after the results: the answer's next step. */
  append(host: MessageNode, text: string): MessageNode {
    const turn = this.hosts.get(host)!;
    turn.step += 1;
    turn.afterResult = false;
    host.content = host.content === '' ? text : `${host.content}\n\n${text}`;
    return host;
  }

  /** Calls the export holds no result of did not end in it; they end in an error saying so. */
  end(): void {
    for (const host of this.hosts.keys())
      for (const call of host.toolCalls ?? [])
        if (call.state === 'input-available')
          Object.assign(call, { state: 'output-error', errorText: 'The ChatGPT export holds no result of this call.' });
  }

  private call(message: ChatGptMessage, parent: MessageNode | undefined, linear: boolean, time: number): MessageNode {
    const joins = parent?.role === 'assistant' && linear;
    const host: MessageNode = joins
      ? parent
      : {
          id: newMessageId(),
          parentId: parent?.id ?? null,
          childrenIds: [],
          role: 'assistant',
          content: '',
          status: 'completed',
          createdAt: time,
          ...(message.metadata?.model_slug ? { model: message.metadata.model_slug } : {}),
        };
    let turn = this.hosts.get(host);
    if (!turn) this.hosts.set(host, (turn = { step: 0, afterResult: false }));
    else if (turn.afterResult) {
      turn.step += 1;
      turn.afterResult = false;
    }
    const call: ToolCall = {
      toolCallId: newToolCallId(),
      toolName: message.recipient!.slice(0, 128),
      step: turn.step,
      offset: host.content.length,
      state: 'input-available',
      input: callInput(message),
    };
    host.toolCalls = [...(host.toolCalls ?? []), call];
    return host;
  }
}

/** The kept message at `key` or nearest above it. */
function keptAncestor(
  mapping: ChatGptConversation['mapping'],
  kept: Map<string, MessageNode>,
  key: string | undefined,
): MessageNode | undefined {
  let current = key !== undefined && Object.hasOwn(mapping, key) ? key : undefined;
  while (current !== undefined) {
    const found = kept.get(current);
    if (found) return found;
    current = mapping[current]!.parent ?? undefined;
  }
  return undefined;
}

/** The end of the branch that always follows the last child: the newest answer, as ChatGPT shows by default. */
function newestLeaf(graph: ThreadGraph, top: MessageNode): MessageNode {
  let node = top;
  while (node.childrenIds.length > 0) node = getNode(graph, node.childrenIds.at(-1)!)!;
  return node;
}

function toMilliseconds(seconds: number | null | undefined): number | undefined {
  return seconds === null || seconds === undefined ? undefined : Math.round(seconds * 1000);
}

/** The first issue, at its path; `within` is the path of the value parsed (an element's index in its array). */
function describeIssue(error: z.ZodError, within: PropertyKey[] = []): string {
  const issue = error.issues[0]!;
  const path = [...within, ...issue.path];
  return path.length === 0 ? issue.message : `${path.map(String).join('.')}: ${issue.message}`;
}

/**
 * The nodes of a graph parents first, first prompts in their order (`firstPrompts`), siblings in the order of
 * `childrenIds`: the order a store keeps them in.
 */
export function nodesInTreeOrder(graph: ThreadGraph): MessageNode[] {
  const ordered: MessageNode[] = [];
  const stack = firstPrompts(graph)
    .map((node) => node.id)
    .reverse();
  while (stack.length > 0) {
    const node = getNode(graph, stack.pop()!)!;
    ordered.push(node);
    stack.push(...[...node.childrenIds].reverse());
  }
  return ordered;
}
