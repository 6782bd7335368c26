import { CPPServer, DemoProvider, type CPPServerOptions } from '@promethea/cpp-server';
import { afterEach, expect } from 'vitest';
import { RawClient, type ConnectOptions } from './raw-client.js';

/**
 * A real server on a free port of 127.0.0.1, with a demo model fast enough for tests and slow enough to pivot. Each
 * model delta is a chunk of its own (`chunkIntervalMs: 0`), so that tests can say exactly what a client was sent;
 * pacing has tests of its own. `options` override any of these. Every test of every package that needs a CPPServer
 * listening starts it here; the caller closes it (the fixtures do).
 */
export async function startServer(options: CPPServerOptions = {}): Promise<CPPServer> {
  const model = options.models ? {} : { model: new DemoProvider({ delayMs: 5, words: 200 }) };
  const server = new CPPServer({ port: 0, host: '127.0.0.1', ...model, chunkIntervalMs: 0, ...options });
  await server.ready;
  return server;
}

export interface ServerFixture {
  /** The server of the running test; started by `start`, or by the first `connect` with the defaults. */
  readonly server: CPPServer;
  start(options?: CPPServerOptions): Promise<CPPServer>;
  /** A RawClient of the running test's server; `query` is appended to the URL (e.g. `did=…`). */
  connect(options?: ConnectOptions & { query?: string }): Promise<RawClient>;
}

/**
 * One server per test and the clients connected to it, all closed after the test, which also fails if any client
 * received a frame that does not match the protocol's schemas.
 */
export function useServer(): ServerFixture {
  let current: CPPServer | undefined;
  let clients: RawClient[] = [];

  afterEach(async () => {
    const [opened, server] = [clients, current];
    [clients, current] = [[], undefined];
    await Promise.all(opened.map((client) => client.close()));
    await server?.close();
    expect(opened.flatMap((client) => client.invalid)).toEqual([]);
  });

  const fixture: ServerFixture = {
    get server() {
      if (!current) throw new Error('no server started in this test');
      return current;
    },
    async start(options = {}) {
      if (current) throw new Error('a server is already running in this test');
      current = await startServer(options);
      return current;
    },
    async connect({ query, ...options } = {}) {
      const server = current ?? (await fixture.start());
      const client = await RawClient.connect(query === undefined ? server.url : `${server.url}?${query}`, options);
      clients.push(client);
      return client;
    },
  };
  return fixture;
}
