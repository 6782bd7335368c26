import {
  applyChunk,
  applyHalted,
  applyToolCall,
  applyPatch,
  graphFromSync,
  type MirrorOutcome,
  type ServerFrame,
  type SyncGraphFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';

export interface MirrorChange {
  threadId: string;
  outcome: MirrorOutcome;
}

/**
 * The client's exact copies of its open threads, kept by the protocol's pure mirror functions. A graph object
 * stays the same while its thread is open (a sync replaces its contents), so a reference to it stays live.
 */
export class ThreadMirrors {
  private readonly graphs = new Map<string, ThreadGraph>();
  /** Each mirror's title, as its last sync or patch gave it. */
  private readonly titles = new Map<string, string>();
  /** The threads the client has asked for: only their syncs make or refresh a mirror. */
  private readonly opened = new Set<string>();

  get(threadId: string): ThreadGraph | undefined {
    return this.graphs.get(threadId);
  }

  /** The thread's title, or `undefined` until its first sync. */
  title(threadId: string): string | undefined {
    return this.titles.get(threadId);
  }

  /** The client asks the server for the thread: its first sync makes the mirror. */
  open(threadId: string): void {
    this.opened.add(threadId);
  }

  /** Drops the mirror; the thread's frames still on their way (a sync among them) are ignored. */
  close(threadId: string): void {
    this.opened.delete(threadId);
    this.graphs.delete(threadId);
    this.titles.delete(threadId);
  }

  threadIds(): string[] {
    return [...this.graphs.keys()];
  }

  /** Applies a frame to the mirror it concerns; `undefined` when it concerns no open thread. */
  apply(frame: ServerFrame): MirrorChange | undefined {
    switch (frame.type) {
      case 'CPP_SYNC_GRAPH':
        if (!this.opened.has(frame.payload.threadId)) return undefined;
        return { threadId: frame.payload.threadId, outcome: this.replace(frame.payload) };
      case 'CPP_GRAPH_PATCH':
        return this.update(frame.payload.threadId, (graph) => {
          const outcome = applyPatch(graph, frame.payload);
          const { title } = frame.payload;
          if (outcome === 'applied' && title !== undefined) this.titles.set(frame.payload.threadId, title);
          return outcome;
        });
      case 'CPP_STREAM_CHUNK':
        return this.update(frame.payload.threadId, (graph) => applyChunk(graph, frame.payload));
      case 'CPP_STREAM_HALTED':
        return this.update(frame.payload.threadId, (graph) => applyHalted(graph, frame.payload));
      case 'CPP_TOOL_CALL':
        return this.update(frame.payload.threadId, (graph) => applyToolCall(graph, frame.payload));
      default:
        return undefined;
    }
  }

  private replace(payload: SyncGraphFrame['payload']): MirrorOutcome {
    const fresh = graphFromSync(payload);
    this.titles.set(payload.threadId, payload.title);
    const graph = this.graphs.get(payload.threadId);
    if (graph) Object.assign(graph, fresh);
    else this.graphs.set(payload.threadId, fresh);
    return 'applied';
  }

  private update(threadId: string, apply: (graph: ThreadGraph) => MirrorOutcome): MirrorChange | undefined {
    const graph = this.graphs.get(threadId);
    return graph && { threadId, outcome: apply(graph) };
  }
}
