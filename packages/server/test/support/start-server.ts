import { CPPServer, DemoProvider, type CPPServerOptions } from '@promethea/cpp-server';

/** A real server on a free port, with a demo model fast enough for tests and slow enough to pivot. */
export async function startServer(options: CPPServerOptions = {}): Promise<CPPServer> {
  const server = new CPPServer({ port: 0, host: '127.0.0.1', model: new DemoProvider({ delayMs: 5, words: 200 }), ...options });
  await server.ready;
  return server;
}
