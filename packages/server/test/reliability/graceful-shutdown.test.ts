import { CloseCode } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { chunksReceived, nextUpdate, openThread, prompt, streamedText } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cli(databasePath: string): Promise<CliServer> {
  // About 2.5 s an answer: SIGTERM always lands in the middle of one.
  const server = await startCliServer(['--db', databasePath, '--demo-delay-ms', '20']);
  cleanups.push(() => server.kill('SIGKILL'));
  return server;
}

describe('graceful shutdown', () => {
  it('on SIGTERM, cpp-server interrupts the stream where it was sent, tells clients to reconnect (1001), flushes and exits 0', {
    timeout: 60_000,
  }, async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const server = await cli(database.path);
    const client = await RawClient.connect(server.url);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Tell me a long story');
    await chunksReceived(client, assistantNodeId, 3);

    const exited = server.kill('SIGTERM');
    const halted = await client.next('CPP_STREAM_HALTED');
    expect(halted.payload).toMatchObject({ interruptedNodeId: assistantNodeId, reason: 'shutdown', threadId });
    const update = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[assistantNodeId]?.status === 'interrupted',
    );
    const sent = streamedText(client, assistantNodeId);
    expect(update.nodes[assistantNodeId]?.content).toBe(sent);
    expect(await client.closed).toBe(CloseCode.GOING_AWAY);
    expect(client.closeReason).toBe('server shutting down');
    expect(await exited).toBe(0);

    // Nothing was left for crash recovery: the thread is exactly as it was committed, down to its version.
    const restarted = await cli(database.path);
    const back = await RawClient.connect(restarted.url);
    cleanups.push(() => back.close());
    const sync = await openThread(back, { threadId });
    expect(sync.version).toBe(update.version);
    expect(sync.nodes[assistantNodeId]).toMatchObject({ status: 'interrupted', content: sent });
  });

  it('stops accepting connections as soon as it begins to shut down', async () => {
    const server = await startServer();
    const url = server.url;
    // A client that never reads keeps the server waiting for its closing handshake a while.
    const stubborn = await RawClient.connect(url);
    stubborn.socket.pause();
    const watcher = await RawClient.connect(url);

    const closing = server.close();
    expect(await watcher.closed).toBe(CloseCode.GOING_AWAY);
    const refused = await RawClient.connect(url).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'ECONNREFUSED' });
    await closing;
    stubborn.socket.terminate();
  });
});
