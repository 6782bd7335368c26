import {
  applyChunk,
  applyHalted,
  applyPatch,
  graphFromSync,
  type MirrorOutcome,
  type ServerFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';

export interface Mirror {
  graph: ThreadGraph | undefined;
  /** Frames that did not apply cleanly, e.g. `CPP_GRAPH_PATCH gap`: an exact mirror has none. */
  problems: string[];
}

/**
 * Replays what a client received about one thread through the protocol's mirror functions, as a client SDK does:
 * the first CPP_SYNC_GRAPH starts the copy, later syncs replace it, patches, chunks and halts apply on top.
 */
export function mirrorOf(frames: readonly ServerFrame[], threadId: string): Mirror {
  const mirror: Mirror = { graph: undefined, problems: [] };
  for (const frame of frames) {
    if (frame.type === 'CPP_SYNC_GRAPH' && frame.payload.threadId === threadId)
      mirror.graph = graphFromSync(frame.payload);
    else if (mirror.graph) note(mirror, frame.type, applyFrame(mirror.graph, frame, threadId));
  }
  return mirror;
}

function applyFrame(graph: ThreadGraph, frame: ServerFrame, threadId: string): MirrorOutcome | undefined {
  switch (frame.type) {
    case 'CPP_GRAPH_PATCH':
      return frame.payload.threadId === threadId ? applyPatch(graph, frame.payload) : undefined;
    case 'CPP_STREAM_CHUNK':
      return frame.payload.threadId === threadId ? applyChunk(graph, frame.payload) : undefined;
    case 'CPP_STREAM_HALTED':
      return frame.payload.threadId === threadId ? applyHalted(graph, frame.payload) : undefined;
    default:
      return undefined;
  }
}

function note(mirror: Mirror, type: string, outcome: MirrorOutcome | undefined): void {
  if (outcome !== undefined && outcome !== 'applied') mirror.problems.push(`${type} ${outcome}`);
}
