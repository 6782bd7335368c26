/** What the peers' clients and servers agree on: the bench's own small protocols over Socket.IO and SSE. */

/** A Socket.IO client emits this to start an answer, with a SocketIoStreamRequest. */
export const SOCKETIO_START_EVENT = 'stream';
/** Each chunk of the answer is an event of this name whose argument is CPP_STREAM_CHUNK's payload. */
export const SOCKETIO_CHUNK_EVENT = 'chunk';

export interface SocketIoStreamRequest {
  threadId: string;
  nodeId: string;
}

/** Where the SSE peer answers, as the AI SDK's `useChat` posts to its chat route. */
export const SSE_CHAT_PATH = '/api/chat';

/** What an SSE client posts: the conversation so far, as `useChat` sends it (an id and the messages). */
export interface SseChatRequest {
  id: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}
