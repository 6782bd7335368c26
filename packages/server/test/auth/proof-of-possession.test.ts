import type { Socket } from 'node:net';
import { CloseCode, didKeyFromEd25519PublicKey, encodeBase64Url } from '@promethea/cpp-protocol';
import { describe, expect, it, vi } from 'vitest';
import { UNPROVEN_MAX_MESSAGE_BYTES } from '../../src/auth/connection-guard.js';
import { ConnectionSession } from '../../src/session/connection-session.js';
import { listThreads, openThread } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { authenticate, challengeOf } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';

const fixture = useServer();
const alice = TestIdentity.generate();
const mallory = TestIdentity.generate();

/** Sends a proof and expects it refused: UNAUTHORIZED naming the frame, then close 4401. */
async function expectRefused(client: RawClient, payload: Record<string, unknown>, reason: RegExp): Promise<void> {
  client.send('CPP_AUTH_PROOF', payload, { id: 'proof' });
  const error = await client.next('CPP_ERROR');
  expect(error.payload).toMatchObject({ code: 'UNAUTHORIZED', refId: 'proof', refType: 'CPP_AUTH_PROOF' });
  expect(error.payload.message).toMatch(reason);
  expect(await client.closed).toBe(CloseCode.UNAUTHORIZED);
}

describe('with auth did-key', () => {
  it('sends a challenge first: a fresh nonce, for this endpoint, expiring within 60 s', async () => {
    const server = await fixture.start({ auth: 'did-key' });
    const [first, second] = [await fixture.connect(), await fixture.connect()];
    const challenge = await challengeOf(first);
    expect(first.frames[0]?.type).toBe('CPP_AUTH_CHALLENGE');
    expect(challenge.audience).toBe(server.url.replace('localhost', '127.0.0.1'));
    expect(challenge.expiresAt - challenge.issuedAt).toBeGreaterThan(0);
    expect(challenge.expiresAt - challenge.issuedAt).toBeLessThanOrEqual(60_000);
    expect((await challengeOf(second)).nonce).not.toBe(challenge.nonce);
  });

  it('accepts the signed challenge: the connection acts as the proven DID', async () => {
    const events: string[] = [];
    const server = await fixture.start({ auth: 'did-key' });
    server.on('authenticated', ({ identity }) => events.push(`${identity.did} ${identity.verified}`));
    const client = await fixture.connect();
    await authenticate(client, alice);
    expect(client.all('CPP_AUTH_ACCEPTED').map((frame) => frame.payload.did)).toEqual([alice.did]);
    const { threadId } = await openThread(client);
    expect((await listThreads(client)).map((thread) => thread.threadId)).toEqual([threadId]);
    expect(events).toEqual([`${alice.did} true`]);
  });

  it('takes the frame right behind the proof, before CPP_AUTH_ACCEPTED has arrived', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    client.send('CPP_AUTH_PROOF', {
      did: alice.did,
      nonce: challenge.nonce,
      signature: alice.signChallenge(challenge),
    });
    client.send('CPP_THREAD_LIST', {}, { id: 'list' });
    expect((await client.next('CPP_THREADS')).payload.threads).toEqual([]);
    expect(client.all('CPP_ERROR')).toEqual([]);
  });

  it('refuses every other frame with UNAUTHORIZED until then, and stays open', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    client.send('CPP_THREAD_LIST', {}, { id: 'early' });
    client.send('CPP_THREAD_OPEN', {}, { id: 'early-open' });
    const errors = [await client.next('CPP_ERROR'), await client.next('CPP_ERROR')].map((frame) => frame.payload);
    expect(errors).toMatchObject([
      { code: 'UNAUTHORIZED', refId: 'early', refType: 'CPP_THREAD_LIST' },
      { code: 'UNAUTHORIZED', refId: 'early-open', refType: 'CPP_THREAD_OPEN' },
    ]);
    await authenticate(client, alice, challenge);
    expect(await listThreads(client)).toEqual([]);
  });

  it('refuses a forged DID: a signature by one key presented as another DID', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    await expectRefused(
      client,
      { did: alice.did, nonce: challenge.nonce, signature: mallory.signChallenge(challenge, alice.did) },
      /signature/,
    );
  });

  it('refuses a wrong signature: the statement of another nonce', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    const otherNonce = {
      ...challenge,
      nonce: `${challenge.nonce.slice(0, -1)}${challenge.nonce.endsWith('A') ? 'B' : 'A'}`,
    };
    await expectRefused(
      client,
      { did: alice.did, nonce: challenge.nonce, signature: alice.signChallenge(otherNonce) },
      /signature/,
    );
  });

  it('refuses a replayed proof on its own connection', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    const proof = { did: alice.did, nonce: challenge.nonce, signature: alice.signChallenge(challenge) };
    client.send('CPP_AUTH_PROOF', proof);
    await client.next('CPP_AUTH_ACCEPTED');
    await expectRefused(client, proof, /no authentication challenge is pending/);
  });

  it("refuses a proof made for another connection's challenge", async () => {
    await fixture.start({ auth: 'did-key' });
    const [victim, attacker] = [await fixture.connect(), await fixture.connect()];
    const victimChallenge = await challengeOf(victim);
    const stolen = { did: alice.did, nonce: victimChallenge.nonce, signature: alice.signChallenge(victimChallenge) };
    await expectRefused(attacker, stolen, /another connection's challenge/);
    victim.send('CPP_AUTH_PROOF', stolen);
    await victim.next('CPP_AUTH_ACCEPTED');
  });

  it('refuses a proof of an expired challenge', async () => {
    await fixture.start({ auth: 'did-key', challenge: { ttlMs: 50, clockSkewMs: 0 } });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    // The proof arrives a millisecond after the challenge's expiry, by the server's clock.
    vi.useFakeTimers({ toFake: ['Date'], now: challenge.expiresAt + 1 });
    try {
      await expectRefused(
        client,
        { did: alice.did, nonce: challenge.nonce, signature: alice.signChallenge(challenge) },
        /expired/,
      );
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a proof of a DID other than the one claimed at the upgrade', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect({ did: alice.did });
    const challenge = await challengeOf(client);
    await expectRefused(
      client,
      { did: mallory.did, nonce: challenge.nonce, signature: mallory.signChallenge(challenge) },
      /another DID/,
    );
  });

  it('refuses the identity point as a key, with the signature R = identity, S = 0 that any message would pass', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    const identityPoint = Uint8Array.from({ length: 32 }, (_, index) => (index === 0 ? 1 : 0));
    const signature = encodeBase64Url(Uint8Array.from({ length: 64 }, (_, index) => (index === 0 ? 1 : 0)));
    await expectRefused(
      client,
      { did: didKeyFromEd25519PublicKey(identityPoint), nonce: challenge.nonce, signature },
      /signature/,
    );
  });

  it('refuses a proof of a DID that is not an Ed25519 did:key', async () => {
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    await expectRefused(
      client,
      {
        did: 'did:web:example.com',
        nonce: challenge.nonce,
        signature: alice.signChallenge(challenge, 'did:web:example.com'),
      },
      /did:key/,
    );
  });

  it('refuses at the upgrade, with HTTP 401, a claim it could never prove', async () => {
    const server = await fixture.start({ auth: 'did-key' });
    const refusal = await RawClient.refusal(server.url, { did: 'did:web:example.com' });
    expect(refusal.status).toBe(401);
    expect(refusal.body).toContain('did:key');
  });

  it('reads no frame larger than 4 KiB before the proof: 1009 as soon as its header announces more, and its usual limit after', async () => {
    await fixture.start({ auth: 'did-key' });
    const unproven = await fixture.connect();
    await challengeOf(unproven);
    // The header of a 7 MiB text frame and its first kilobyte: the server does not wait for the rest.
    const socket = (unproven.socket as unknown as { _socket: Socket })._socket;
    const header = Buffer.alloc(14);
    header.writeUInt8(0x81, 0);
    header.writeUInt8(0x80 | 127, 1);
    header.writeBigUInt64BE(BigInt(7 * 1024 * 1024), 2);
    socket.write(Buffer.concat([header, Buffer.alloc(1024, 0x20)]));
    expect(await unproven.closed).toBe(1009);

    const proven = await fixture.connect();
    await authenticate(proven, alice);
    proven.send('CPP_THREAD_LIST', {}, { padding: ' '.repeat(64 * 1024) });
    expect((await proven.next('CPP_THREADS')).payload.threads).toEqual([]);
  });

  it('inflates no compressed frame past 4 KiB before the proof, and its usual limit after', async () => {
    const send = vi.spyOn(ConnectionSession.prototype, 'send');
    await fixture.start({ auth: 'did-key' });
    const client = await fixture.connect();
    const challenge = await challengeOf(client);
    // The session that sent the challenge; ws's permessage-deflate of its socket stops inflating past its limit.
    const session = send.mock.contexts[0] as ConnectionSession;
    const inflater = () =>
      (session['socket'] as unknown as { webSocket: { _extensions: Record<string, { _maxPayload: number }> } })
        .webSocket._extensions['permessage-deflate']!;
    expect(inflater()._maxPayload).toBe(UNPROVEN_MAX_MESSAGE_BYTES);
    await authenticate(client, alice, challenge);
    expect(inflater()._maxPayload).toBe(8 * 1024 * 1024);
    send.mockRestore();
  });

  it('closes with 4408 a connection that does not authenticate in time', async () => {
    await fixture.start({ auth: 'did-key', limits: { authTimeoutMs: 50 } });
    const client = await fixture.connect();
    expect(await client.closed).toBe(CloseCode.TIMEOUT);
    expect(client.closeReason).toBe('authentication did not finish in time');
  });
});

describe('with auth claimed', () => {
  it('sends no challenge to a connection whose claim cannot be proven: the seed spec session is unchanged', async () => {
    await fixture.start();
    const client = await fixture.connect({ did: 'did:key:zAlice' });
    await listThreads(client);
    expect(client.frames.map((frame) => frame.type)).toEqual(['CPP_THREADS']);
  });

  it('challenges a claimed Ed25519 did:key, which may prove itself but need not', async () => {
    await fixture.start();
    const proving = await fixture.connect({ did: alice.did });
    await authenticate(proving, alice);
    const { threadId } = await openThread(proving);
    const trusting = await fixture.connect({ did: alice.did });
    await challengeOf(trusting);
    expect((await listThreads(trusting)).map((thread) => thread.threadId)).toEqual([threadId]);
  });
});
