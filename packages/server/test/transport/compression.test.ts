import type { Socket } from 'node:net';
import { describe, expect, it, vi } from 'vitest';
import { ConnectionSession } from '../../src/session/connection-session.js';
import { eventually } from '../support/eventually.js';
import { completion, listThreads, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** Words enough to take a thread's sync past the 64 KiB threshold: a prompt as long as an article pasted in. */
const LONG_PROMPT = Array.from({ length: 12_000 }, (_, index) => `word${index % 997}`).join(' ');

/** A message the client reads, with the bytes it took on the TCP socket: its frame's header and payload, as sent. */
async function received(
  client: RawClient,
  action: () => Promise<unknown>,
): Promise<{ messageBytes: number; wireBytes: number }> {
  const tcp = (client.socket as unknown as { _socket: Socket })._socket;
  let messageBytes = 0;
  const count = (data: Buffer) => (messageBytes += data.byteLength);
  client.socket.on('message', count);
  const before = tcp.bytesRead;
  await action();
  client.socket.off('message', count);
  return { messageBytes, wireBytes: tcp.bytesRead - before };
}

/** A thread whose answer has ended and been synced: nothing more arrives on the connection unasked. */
async function threadWithLongPrompt(client: RawClient): Promise<string> {
  const { threadId } = await openThread(client);
  const { assistantNodeId } = await prompt(client, threadId, LONG_PROMPT);
  await completion(client, threadId, assistantNodeId);
  return threadId;
}

describe('permessage-deflate', () => {
  it('sends a sync past the threshold compressed to a client that offered it, and small frames as they are', async () => {
    await fixture.start({ model: new ScriptedModel({ chunks: ['ok'] }, { gated: false }) });
    const client = await fixture.connect();
    const threadId = await threadWithLongPrompt(client);
    expect(client.socket.extensions).toContain('permessage-deflate');

    const sync = await received(client, () => requestSync(client, threadId));
    expect(sync.messageBytes).toBeGreaterThan(64 * 1024);
    expect(sync.wireBytes).toBeLessThan(sync.messageBytes / 2);

    // The thread list, well under the threshold: its frame is its message and a 2-byte header (4 past 125 bytes).
    const list = await received(client, () => listThreads(client));
    expect(list.messageBytes).toBeGreaterThan(125);
    expect(list.wireBytes).toBe(list.messageBytes + 4);
  });

  it('lets go of a connection’s compressor once its large frame is sent, and makes one again for the next', async () => {
    const send = vi.spyOn(ConnectionSession.prototype, 'send');
    await fixture.start({ model: new ScriptedModel({ chunks: ['ok'] }, { gated: false }) });
    const client = await fixture.connect();
    const threadId = await threadWithLongPrompt(client);
    const session = send.mock.contexts[0] as ConnectionSession;
    send.mockRestore();
    const extension = (
      session['socket'] as unknown as { webSocket: { _extensions: Record<string, { _deflate: unknown }> } }
    ).webSocket._extensions['permessage-deflate']!;

    for (let sync = 0; sync < 2; sync += 1) {
      const { messageBytes, wireBytes } = await received(client, () => requestSync(client, threadId));
      expect(wireBytes).toBeLessThan(messageBytes / 2);
      // Let go of in the callback of the frame's write, which may come a turn after the client has read it.
      await eventually(() => (extension._deflate === null ? true : undefined), 'the compressor let go of');
    }
  });

  it('is not negotiated with a threshold of 0: a large sync goes as it is', async () => {
    await fixture.start({
      model: new ScriptedModel({ chunks: ['ok'] }, { gated: false }),
      compressionThresholdBytes: 0,
    });
    const client = await fixture.connect();
    const threadId = await threadWithLongPrompt(client);
    expect(client.socket.extensions).toBe('');

    const sync = await received(client, () => requestSync(client, threadId));
    expect(sync.wireBytes).toBe(sync.messageBytes + 10);
  });
});
