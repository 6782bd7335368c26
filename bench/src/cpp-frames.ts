import { newMessageId, type ClientFrame, type ClientFrameType, type ClientPayload } from '@promethea/cpp-protocol';
import type { BenchSocket } from './bench-socket.js';

export function clientFrame<Type extends ClientFrameType>(type: Type, payload: ClientPayload<Type>): ClientFrame {
  return { type, timestamp: Date.now(), payload } as ClientFrame;
}

export interface StreamingThread {
  threadId: string;
  /** The assistant node being streamed. */
  nodeId: string;
  /** The text of its first chunk. */
  firstDelta: string;
}

/** Opens a new thread (patch mode unless told otherwise), prompts, and returns once the answer's first chunk is in. */
export async function startStreamingThread(socket: BenchSocket, patches = true): Promise<StreamingThread> {
  const synced = socket.next('CPP_SYNC_GRAPH');
  socket.send(clientFrame('CPP_THREAD_OPEN', { patches }));
  const threadId = (await synced).frame.payload.threadId;
  const firstChunk = socket.next('CPP_STREAM_CHUNK');
  socket.send(
    clientFrame('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'tell me a long story',
      newNodeId: newMessageId(),
    }),
  );
  const { payload } = (await firstChunk).frame;
  return { threadId, nodeId: payload.nodeId, firstDelta: payload.delta };
}
