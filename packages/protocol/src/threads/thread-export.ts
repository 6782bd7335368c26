import type { Attachment } from '../attachment.js';
import type { MessageNode } from '../node.js';
import { pathToRoot } from '../tree/path.js';
import { getNode, type ThreadGraph } from '../tree/thread-graph.js';
import type { SyncGraphFrame } from '../frames/server-frames.js';

/**
 * The name and version a CPP JSON export carries, so that a reader knows what it holds before it reads it. Its
 * schema is in thread-export-schema.ts, apart, so that exporting needs no zod (a browser bundle stays small).
 */
export const THREAD_EXPORT_FORMAT = 'cpp-thread';
export const THREAD_EXPORT_FORMAT_VERSION = 1;

/**
 * A thread as a file: its CPP_SYNC_GRAPH payload (the whole tree, the head, the version and the title) with the
 * format's name and version and the time of the export. Version 1 changes only by adding optional fields.
 */
export interface ThreadExport {
  format: typeof THREAD_EXPORT_FORMAT;
  formatVersion: typeof THREAD_EXPORT_FORMAT_VERSION;
  exportedAt: number;
  thread: SyncGraphFrame['payload'];
  /**
   * The bytes of the files the thread's messages carry (docs/PROTOCOL.md §27), base64 (RFC 4648 §4, padded), by
   * their SHA-256: each file once, however many messages carry it. Absent when no message carries one.
   */
  files?: Record<string, string>;
}

/** `files`: the base64 bytes of the files its messages carry, by SHA-256 (`carriedFiles` lists them). */
export function exportThread(
  graph: ThreadGraph,
  title: string,
  exportedAt: number,
  files?: Record<string, string>,
): ThreadExport {
  const { threadId, rootNodeId, activeHeadMessageId, version } = graph;
  return {
    format: THREAD_EXPORT_FORMAT,
    formatVersion: THREAD_EXPORT_FORMAT_VERSION,
    exportedAt,
    thread: { threadId, rootNodeId, activeHeadMessageId, nodes: structuredClone(graph.nodes), version, title },
    ...(files && Object.keys(files).length > 0 ? { files } : {}),
  };
}

/** The files the messages of a graph carry, each once (by SHA-256): what an export holds the bytes of. */
export function carriedFiles(graph: ThreadGraph): Attachment[] {
  const files = new Map<string, Attachment>();
  for (const node of Object.values(graph.nodes))
    for (const attachment of node.attachments ?? [])
      if (!files.has(attachment.sha256)) files.set(attachment.sha256, attachment);
  return [...files.values()];
}

const ROLE_LABELS = { user: 'User', assistant: 'Assistant' } as const;

/**
 * The active branch (root to head) as Markdown: the title as the one heading, then each message after a bold line
 * naming its role, with an answer that did not complete marked as such, messages apart by a thematic break. The
 * roles are not headings: answers have headings of their own, and the document's outline is theirs. Messages are
 * Markdown already and stay as written.
 */
export function threadToMarkdown(graph: ThreadGraph, title: string): string {
  const head = graph.activeHeadMessageId;
  const branch = head === null || !getNode(graph, head) ? [] : pathToRoot(graph, head);
  const heading = `# ${title.trim() === '' ? 'Untitled conversation' : title.trim()}`;
  return `${[heading, branch.map(messageSection).join('\n\n---\n\n')].filter((part) => part !== '').join('\n\n')}\n`;
}

function messageSection(node: MessageNode): string {
  const status = node.status === 'completed' ? '' : ` (${node.status})`;
  const files = (node.attachments ?? []).map(fileLine);
  const body = [node.content, ...files].filter((part) => part !== '').join('\n\n');
  return `**${ROLE_LABELS[node.role]}${status}**\n\n${body}`;
}

/** A file the message carries, as a paragraph of its own: the Markdown holds no bytes, so it says what was sent. */
function fileLine(file: Attachment): string {
  const pixels = file.width !== undefined && file.height !== undefined ? `, ${file.width}×${file.height}` : '';
  return `File: ${codeSpan(file.name)} (${file.mediaType}${pixels}, ${file.size} bytes)`;
}

/** `text` as a CommonMark code span: fenced by one backtick more than its longest run, so a name shows as it is. */
function codeSpan(text: string): string {
  const fence = '`'.repeat(Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length)) + 1);
  const pad = text.startsWith('`') || text.endsWith('`') ? ' ' : '';
  return `${fence}${pad}${text}${pad}${fence}`;
}
