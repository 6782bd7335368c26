/** The non-empty lines of a newline-delimited JSON body (Ollama's native streaming format). */
export async function* ndjsonLines(body: AsyncIterable<string>): AsyncGenerator<string> {
  let pending = '';
  for await (const text of body) {
    const lines = (pending + text).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') yield line;
  }
  if (pending.trim() !== '') yield pending;
}
