/**
 * The most a model's stream may send as one frame (an SSE event, an NDJSON line) before it ends, in characters; in
 * bytes for one line of the bodies that vendor SDKs read (bounded-fetch.ts). Real frames are a few hundred; the bound
 * keeps a broken or hostile upstream from filling the server's memory.
 */
export const MAX_STREAM_FRAME_LENGTH = 1024 * 1024;

/**
 * The most of an error response's body that is read, in bytes; the rest is cut. Vendors' error bodies are a few
 * hundred bytes of JSON, and only their first 500 characters of message reach a client.
 */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * A response that the reader stopped reading before its end is cut, unless it ends within this time: after a
 * stream's terminator only the end of the HTTP response is left to come, and reading it keeps the connection.
 */
export const DRAIN_LIMIT_MS = 1000;
