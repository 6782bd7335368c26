import type { CPPClient } from '@promethea/cpp-client';

/**
 * Resolves once an answer streams in the thread with at least `length` code units, or once `answer` settles (it
 * ended first). For a thread where only this client writes. `replacing` names the node a pivot halts: until the
 * server's halt arrives it still shows as streaming, and it is not the answer waited for.
 */
export function streamedAtLeast(
  client: CPPClient,
  threadId: string,
  length: number,
  answer: Promise<unknown>,
  replacing?: string,
): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      client.off('graph', check);
      resolve();
    };
    const check = () => {
      const node = client.streamingNode(threadId);
      if (node && node.id !== replacing && node.content.length >= length) done();
    };
    client.on('graph', check);
    answer.then(done, done);
  });
}
