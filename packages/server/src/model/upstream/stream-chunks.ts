/**
 * Iterates a web ReadableStream; stopping early cancels it, which closes the HTTP response it reads. With a
 * `signal`, an abort ends the iteration at once even when the stream's source does not react to aborts itself.
 */
export async function* streamChunks<T>(stream: ReadableStream<T>, signal?: AbortSignal): AsyncGenerator<T> {
  const reader = stream.getReader();
  const cancel = (): void => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    signal?.removeEventListener('abort', cancel);
    if (!finished) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}
