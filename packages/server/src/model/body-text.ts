import { streamChunks } from './stream-chunks.js';

/**
 * The text of a response body as it arrives, decoded as UTF-8 with one TextDecoder (a character split across two
 * chunks is held back until its end arrives). Read straight from the body's reader: a TextDecoderStream would put
 * a web-stream pipe, with its own queues and promises, between the socket and the first token.
 */
export async function* bodyText(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  for await (const bytes of streamChunks(body)) {
    const text = decoder.decode(bytes, { stream: true });
    if (text !== '') yield text;
  }
  const rest = decoder.decode();
  if (rest !== '') yield rest;
}
