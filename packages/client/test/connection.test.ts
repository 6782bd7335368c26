import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { CPPClient, ConnectionClosedError } from '@promethea/cpp-client';
import { describe, expect, it } from 'vitest';
import { DID, useFakeSession } from './support/session.js';

describe('CPPClient connection', () => {
  const session = useFakeSession();

  it('offers the cpp-v1.0.0 subprotocol and sends the DID in the X-Client-Sovereign-DID header', async () => {
    const client = session.connect();
    expect(client.status).toBe('connecting');
    await client.ready();
    expect(client.status).toBe('open');
    expect(session.server.handshakes).toEqual([{ did: DID, didFromHeader: true, url: '/v1/cpp/session' }]);
    expect(session.server.peers[0]?.protocol).toBe(CPP_SUBPROTOCOL);
  });

  it('queues frames sent before the socket opens and sends them in order once it does', async () => {
    const client = session.connect();
    const requests = [client.openThread('thread_first'), client.listThreads(), client.openThread('thread_second')];
    expect(client.status).toBe('connecting');
    await Promise.all(requests);
    const received = session.server.received;
    expect(received.map((frame) => frame.type)).toEqual(['CPP_THREAD_OPEN', 'CPP_THREAD_LIST', 'CPP_THREAD_OPEN']);
    expect(received.map((frame) => frame.payload)).toEqual([
      { threadId: 'thread_first', patches: true, presence: true },
      {},
      { threadId: 'thread_second', patches: true, presence: true },
    ]);
  });

  it('gives every frame a unique id and a timestamp', async () => {
    const before = Date.now();
    const client = session.connect();
    await Promise.all([client.openThread(), client.listThreads(), client.listThreads()]);
    const ids = session.server.received.map((frame) => frame.id);
    expect(new Set(ids).size).toBe(3);
    for (const frame of session.server.received) expect(frame.timestamp).toBeGreaterThanOrEqual(before);
  });

  it('reports its status and rejects pending and later requests once closed', async () => {
    const client = session.connect();
    const statuses: string[] = [];
    client.on('status', (status) => statuses.push(status));
    session.server.handle('CPP_THREAD_LIST', () => undefined);
    const listing = client.listThreads();
    await session.server.frame('CPP_THREAD_LIST');
    await client.close();
    await expect(listing).rejects.toBeInstanceOf(ConnectionClosedError);
    await expect(client.openThread()).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(statuses).toEqual(['open', 'closed']);
    expect(client.status).toBe('closed');
  });

  it('rejects pending requests with the close code when the server drops the connection', async () => {
    const client = session.connect();
    session.server.handle('CPP_THREAD_LIST', (_frame, peer) => peer.close(4500, 'server failed'));
    const error = await client.listThreads().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConnectionClosedError);
    expect(error).toMatchObject({ code: 4500, reason: 'server failed' });
  });

  it('rejects ready() when the server refuses the handshake', async () => {
    const client = new CPPClient({ endpoint: session.server.url.replace('/v1/cpp/session', '/elsewhere') });
    await expect(client.ready()).rejects.toBeInstanceOf(ConnectionClosedError);
    expect(client.status).toBe('closed');
  });
});
