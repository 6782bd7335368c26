import { streamChunks } from './stream-chunks.js';

/** The non-empty lines of a newline-delimited JSON body (Ollama's native streaming format). */
export async function* ndjsonLines(body: ReadableStream<Uint8Array<ArrayBuffer>>): AsyncGenerator<string> {
  let pending = '';
  for await (const text of streamChunks(body.pipeThrough(new TextDecoderStream()))) {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    yield* lines.filter((line) => line.trim() !== '');
  }
  if (pending.trim() !== '') yield pending;
}
