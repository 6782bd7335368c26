import { once } from 'node:events';
import { CloseCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { listThreads } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();
const MIB = 1024 * 1024;

describe('the time a message may take to arrive', () => {
  it('closes with 4408 a connection that holds back the end of a fragmented message, and lets go of what it held', async () => {
    const server = await fixture.start({ limits: { messageTimeoutMs: 200 } });
    const client = await fixture.connect();
    await listThreads(client);
    const disconnected = once(server, 'disconnect');
    // Seven fragments of 1 MiB, each under the frame limit's 8 ×, and no final one: 7 MiB held by the server.
    for (let index = 0; index < 7; index += 1)
      client.socket.send(index === 0 ? `{"type":"${'x'.repeat(MIB)}` : 'x'.repeat(MIB), { fin: false });
    expect(await client.closed).toBe(CloseCode.TIMEOUT);
    expect(client.closeReason).toBe('a message took too long to arrive');
    await disconnected;
    expect(server.connectionCount).toBe(0);
  });

  it('closes a connection whose single frame arrives no further than its header and first bytes', async () => {
    await fixture.start({ limits: { messageTimeoutMs: 200 } });
    const client = await fixture.connect();
    await listThreads(client);
    // A masked text frame announcing 1 MiB (64-bit length), followed by its mask and 1 KiB of payload only.
    const header = Buffer.from([0x81, 0xff, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4]);
    (client.socket as unknown as { _socket: { write(data: Buffer): void } })._socket.write(
      Buffer.concat([header, Buffer.alloc(1024, 0x20)]),
    );
    expect(await client.closed).toBe(CloseCode.TIMEOUT);
  });

  it('takes a fragmented message that arrives whole in time, and a stream of whole messages however long it lasts', async () => {
    await fixture.start({ limits: { messageTimeoutMs: 200 } });
    const client = await fixture.connect();
    client.socket.send('{"type":"CPP_THREAD_', { fin: false });
    client.socket.send('LIST","timestamp":1,"payload":{}}', { fin: true });
    await client.next('CPP_THREADS');
    for (let round = 0; round < 5; round += 1) await listThreads(client);
    expect(client.closeReason).toBeUndefined();
  });
});
