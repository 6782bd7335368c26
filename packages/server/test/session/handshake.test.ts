import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { listThreads, openThread } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();
let url: string;

beforeEach(async () => {
  url = (await fixture.start()).url;
});

const didQuery = (did: string) => `did=${encodeURIComponent(did)}`;

describe('the upgrade', () => {
  it('selects the subprotocol cpp-v1.0.0, also among others offered', async () => {
    expect((await fixture.connect()).protocol).toBe(CPP_SUBPROTOCOL);
    expect((await fixture.connect({ protocols: ['graphql-ws', CPP_SUBPROTOCOL] })).protocol).toBe(CPP_SUBPROTOCOL);
  });

  it('is refused with HTTP 400 and a plain-text reason when the subprotocol is not offered', async () => {
    for (const protocols of [[], ['graphql-ws'], ['cpp-v0.9.0']]) {
      const refusal = await RawClient.refusal(url, { protocols });
      expect(refusal.status).toBe(400);
      expect(refusal.contentType).toMatch(/^text\/plain/);
      expect(refusal.body.trim()).toBe('CPP requires the WebSocket subprotocol cpp-v1.0.0');
    }
  });

  it('is refused with HTTP 404 on any other path', async () => {
    expect((await RawClient.refusal(url.replace('/v1/cpp/session', '/v1/cpp/other'))).status).toBe(404);
  });

  it('answers a plain GET of the session path with 426 Upgrade Required', async () => {
    const response = await fetch(url.replace(/^ws/, 'http'));
    expect(response.status).toBe(426);
    expect(await response.text()).toContain(CPP_SUBPROTOCOL);
  });

  it('is followed by silence: the first frame the server sends answers the first frame the client sends', async () => {
    const client = await fixture.connect();
    await listThreads(client);
    expect(client.frames.map((frame) => frame.type)).toEqual(['CPP_THREADS']);
  });
});

describe('identity', () => {
  it('refuses with HTTP 400 a header or query parameter that is not a DID', async () => {
    const notDids = ['alice', 'did:', 'did:key', 'DID:key:abc', `did:key:${'z'.repeat(250)}`, 'did:key:has space'];
    for (const did of notDids) {
      const fromHeader = await RawClient.refusal(url, { did });
      expect(fromHeader.status, did).toBe(400);
      expect(fromHeader.body).toContain('DID');
      expect((await RawClient.refusal(`${url}?${didQuery(did)}`)).status, did).toBe(400);
    }
  });

  it('accepts a DID of up to 256 characters', async () => {
    const did = `did:key:${'z'.repeat(248)}`;
    expect(did).toHaveLength(256);
    await openThread(await fixture.connect({ did }));
    expect(await listThreads(await fixture.connect({ query: didQuery(did) }))).toHaveLength(1);
  });

  it('owns the threads a connection creates, whether the DID came as a header or a query parameter', async () => {
    const { threadId } = await openThread(await fixture.connect({ query: didQuery('did:key:zAlice') }));
    expect(
      (await listThreads(await fixture.connect({ did: 'did:key:zAlice' }))).map((thread) => thread.threadId),
    ).toEqual([threadId]);
    expect(await listThreads(await fixture.connect({ did: 'did:key:zBob' }))).toEqual([]);
    expect(await listThreads(await fixture.connect())).toEqual([]);
  });

  it('takes the header over the query parameter when both are present', async () => {
    const { threadId } = await openThread(
      await fixture.connect({ query: didQuery('did:key:zQuery'), did: 'did:key:zHeader' }),
    );
    expect(
      (await listThreads(await fixture.connect({ did: 'did:key:zHeader' }))).map((thread) => thread.threadId),
    ).toEqual([threadId]);
    expect(await listThreads(await fixture.connect({ query: didQuery('did:key:zQuery') }))).toEqual([]);
  });

  it('is anonymous without a DID: anonymous connections share their threads and no DID sees them', async () => {
    const { threadId } = await openThread(await fixture.connect());
    expect((await listThreads(await fixture.connect())).map((thread) => thread.threadId)).toEqual([threadId]);
    expect(await listThreads(await fixture.connect({ did: 'did:key:zAlice' }))).toEqual([]);
  });
});
