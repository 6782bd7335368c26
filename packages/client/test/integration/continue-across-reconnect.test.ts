import { CPPClient } from '@promethea/cpp-client';
import type { CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../../../test/support/local-port.js';
import { HeldStore } from '../../../server/test/support/held-store.js';
import { ScriptedModel } from '../../../server/test/support/scripted-model.js';
import { startServer } from '../../../server/test/support/start-server.js';
import { DID, mirrorUntil } from '../support/session.js';
import { TcpProxy } from '../support/tcp-proxy.js';

describe('CPPClient.continue across a reconnect, against the real CPPServer', () => {
  const closing: Array<{ close(): Promise<void> }> = [];
  afterEach(async () => {
    for (const resource of closing.splice(0).reverse()) await resource.close();
  });

  it('settles with the answer that ended while the client was away, from the re-synced node, without sending it again', async () => {
    const store = new HeldStore();
    const model = new ScriptedModel((callIndex) => ({
      chunks: callIndex === 0 ? ['Half', ' unseen'] : [' and the rest'],
    }));
    const server: CPPServer = await startServer({ model, store });
    closing.push(server);
    const proxy = await TcpProxy.start(server.port);
    closing.push(proxy);
    const client = new CPPClient({
      endpoint: `ws://127.0.0.1:${proxy.port}`,
      did: DID,
      reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
    });
    closing.push(client);
    const { threadId } = await client.openThread();
    const first = client.prompt({ userPrompt: 'Tell me' });
    (await model.call(0)).release(1);
    await mirrorUntil(client, threadId, () => client.streamingNode()?.content === 'Half');
    await client.stop();
    const stopped = await first;

    // The server takes the continue and makes its model call; the commit that sets the node streaming again waits,
    // so the client has seen nothing of the continuation when its connection dies.
    store.hold();
    const deltas: string[] = [];
    const continued = client.continue({ onStream: (delta) => deltas.push(delta) });
    const continuation = await model.call(1);
    proxy.targetPort = await freePort();
    expect(proxy.cutOne()).toBe(true);
    store.release();
    continuation.releaseAll();
    const watcher = new CPPClient({ endpoint: server.url, did: DID });
    closing.push(watcher);
    await watcher.openThread(threadId);
    await mirrorUntil(watcher, threadId, (graph) => graph.nodes[stopped.assistantNodeId]?.status === 'completed');
    proxy.targetPort = server.port;

    expect(await continued).toMatchObject({
      assistantNodeId: stopped.assistantNodeId,
      status: 'completed',
      content: 'Half and the rest',
    });
    expect(deltas.join('')).toBe(' and the rest');
    expect(model.calls).toHaveLength(2);
  });
});
