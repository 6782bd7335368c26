import { DemoProvider, type CPPServer, type MemoryStore } from '@promethea/cpp-server';
import { onTestFinished } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';

export interface DemoServerOptions {
  port?: number;
  store?: MemoryStore;
  /** A slow model keeps an answer streaming for as long as a test needs to act on it. */
  slow?: boolean;
  /** The demo model's reasoning mode: it reasons in this many words before it answers. */
  reasoningWords?: number;
  /** The ids of the models the server offers, each the demo model, the first the default; default: one model. */
  models?: string[];
  /** `did-key`: identities are proven, as shared threads need (PROTOCOL.md §29). */
  auth?: 'did-key';
}

/** A real CPP server on 127.0.0.1 with the demo model (short, quick answers unless slow), closed after each test. */
export async function startDemoServer(options: DemoServerOptions = {}): Promise<CPPServer> {
  const demoModel = () =>
    new DemoProvider({
      ...(options.slow ? { delayMs: 50, words: 400 } : { delayMs: 2, words: 12 }),
      reasoningWords: options.reasoningWords ?? 0,
    });
  const server = await startServer({
    port: options.port ?? 0,
    ...(options.models
      ? { models: options.models.map((id) => ({ id, label: id, provider: demoModel() })) }
      : { model: demoModel() }),
    ...(options.store && { store: options.store }),
    ...(options.auth && { auth: options.auth }),
  });
  onTestFinished(() => server.close());
  return server;
}

export function endpointOf(server: CPPServer): string {
  return `ws://127.0.0.1:${server.port}`;
}
