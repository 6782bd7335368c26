/**
 * The most a model's stream may send as one frame (an SSE event, an NDJSON line) before it ends, in characters; in
 * bytes for one line of the bodies that vendor SDKs read (bounded-fetch.ts). Real frames are a few hundred; the bound
 * keeps a broken or hostile upstream from filling the server's memory.
 */
export const MAX_STREAM_FRAME_LENGTH = 1024 * 1024;
