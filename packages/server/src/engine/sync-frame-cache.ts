import { encodeServerFrame, streamingNodes, type ThreadGraph } from '@promethea/cpp-protocol';
import type { ThreadRecord } from '../store/conversation-store.js';

/** 16 KiB of JSON: serialising it takes tens of microseconds. */
const KEPT_FRAME_LENGTH = 16 * 1024;

/**
 * A thread's CPP_SYNC_GRAPH, serialised once and shared by every sync until the thread changes. Serialising a
 * thread of megabytes takes tens of milliseconds of the event loop, which every other connection waits through;
 * built per request, a few sync requests on one big thread stalled everyone for seconds (issue 21).
 *
 * The frame changes with the version, the title, and the text and reasoning of the streaming node (chunks change no
 * version, docs/PROTOCOL.md §9.2), so those make up the key: while an answer streams each sync may need a new frame,
 * which the per-identity sync allowance bounds.
 *
 * Only a frame of `KEPT_FRAME_LENGTH` characters or more is kept: a small thread's frame is built again in
 * microseconds, and kept it was a third of what an open empty thread holds (issue 20), multiplied by every thread a
 * server keeps open.
 */
export class SyncFrameCache {
  private key: string | undefined;
  private frame = '';

  constructor(
    private readonly graph: ThreadGraph,
    private readonly record: ThreadRecord,
  ) {}

  get(): string {
    const key = this.currentKey();
    if (key === this.key) return this.frame;
    const frame = encodeServerFrame('CPP_SYNC_GRAPH', {
      threadId: this.graph.threadId,
      rootNodeId: this.graph.rootNodeId,
      activeHeadMessageId: this.graph.activeHeadMessageId,
      nodes: this.graph.nodes,
      version: this.graph.version,
      title: this.record.title,
    });
    const kept = frame.length >= KEPT_FRAME_LENGTH;
    this.key = kept ? key : undefined;
    this.frame = kept ? frame : '';
    return frame;
  }

  private currentKey(): string {
    return JSON.stringify([streamState(this.graph), this.graph.activeHeadMessageId, this.record.title]);
  }
}

/** What may change without a new version: the streaming nodes' text and reasoning, each grown by chunks. */
export function streamState(graph: ThreadGraph): string {
  const lengths = streamingNodes(graph).map((node) => `${node.id} ${node.content.length} ${node.reasoning?.length}`);
  return `${graph.version} ${lengths.join(' ')}`;
}
