import { CPPClient, type CPPClientOptions } from '@promethea/cpp-client';
import {
  DEFAULT_CHUNK_INTERVAL_MS,
  DemoProvider,
  type CPPServer,
  type DemoProviderOptions,
} from '@promethea/cpp-server';
import { afterEach } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { DID } from './session.js';

/**
 * The real CPPServer with the demo model, in memory on port 0, its chunks paced as a deployed server paces them, and
 * clients that are closed after each test.
 */
export function useRealServer() {
  const servers: CPPServer[] = [];
  const clients: CPPClient[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close()));
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return {
    async start(demo: DemoProviderOptions): Promise<CPPServer> {
      const server = await startServer({ model: new DemoProvider(demo), chunkIntervalMs: DEFAULT_CHUNK_INTERVAL_MS });
      servers.push(server);
      return server;
    },
    connect(server: CPPServer, did = DID, options: Partial<CPPClientOptions> = {}): CPPClient {
      const client = new CPPClient({ endpoint: server.url, did, ...options });
      clients.push(client);
      return client;
    },
  };
}

/** A demo answer that ends at once. */
export const SHORT_ANSWERS: DemoProviderOptions = { delayMs: 0, words: 12 };
/** A demo answer far longer than any test: it is still streaming whenever the test acts on it. */
export const ENDLESS_ANSWERS: DemoProviderOptions = { delayMs: 5, words: 100_000 };
