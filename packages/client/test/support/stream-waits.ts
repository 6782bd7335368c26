import type { CPPClient } from '@promethea/cpp-client';

/**
 * Resolves once the node streaming in the thread holds at least `length` code units, or once `answer` settles
 * (it ended first). For a thread where only this answer can be streaming.
 */
export function streamedAtLeast(client: CPPClient, threadId: string, length: number, answer: Promise<unknown>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      client.off('graph', check);
      resolve();
    };
    const check = () => {
      const node = client.streamingNode(threadId);
      if (node && node.content.length >= length) done();
    };
    client.on('graph', check);
    answer.then(done, done);
  });
}
