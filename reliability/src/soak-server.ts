import { CPPServer, DemoProvider } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import type { ServerReply, ServerRequest } from './server-child.js';

/**
 * The server under soak, in a process of its own (started by `ServerChild`), so that its memory is measured alone
 * and its event loop shares nothing with the clients. Arguments: database file, demo delay, demo words.
 */
const [databasePath, delayMs, words] = process.argv.slice(2);
const store = SqliteStore.open(databasePath!);
const server = new CPPServer({
  port: 0,
  host: '127.0.0.1',
  store,
  model: new DemoProvider({ delayMs: Number(delayMs), words: Number(words) }),
});
let errors = 0;
server.on('error', (error) => {
  errors += 1;
  console.error('soak server error:', error);
});
await server.ready;

process.on('message', (request: ServerRequest) => {
  answer(request).then(
    (result) => process.send!({ id: request.id, result } satisfies ServerReply),
    (error: unknown) => process.send!({ id: request.id, error: String(error) } satisfies ServerReply),
  );
});
process.send!({ url: server.url });

async function answer(request: ServerRequest): Promise<ServerReply['result']> {
  switch (request.command) {
    case 'memory':
      return collectedMemory();
    case 'status':
      return {
        connections: server.connectionCount,
        errors,
        heapUsed: process.memoryUsage().heapUsed,
        rss: process.memoryUsage().rss,
      };
    case 'close':
      await server.close();
      await store.close();
      setImmediate(() => process.exit(0));
      return undefined;
  }
}

/** Heap and resident size after two full collections (the process runs with --expose-gc). */
async function collectedMemory(): Promise<{ heapUsed: number; rss: number }> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let pass = 0; pass < 2; pass += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}
