import type { IncomingMessage } from 'node:http';
import { UpgradeRefusal, type IdentityVerifier } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { expectError, listThreads, openThread } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();
const TOKENS: Record<string, string> = { 'token-alice': 'did:web:alice.example', 'token-bob': 'did:web:bob.example' };

/** The application's own sessions: a bearer token in the query string names the user. */
const verifier: IdentityVerifier = async (request: IncomingMessage) => {
  const token = new URL(request.url ?? '/', 'http://localhost').searchParams.get('token') ?? '';
  const did = TOKENS[token];
  return did ? { did, verified: true } : new UpgradeRefusal(401, 'unknown token');
};

describe('a custom verifier', () => {
  it('decides who connects, refusing with its own HTTP status', async () => {
    const server = await fixture.start({ auth: verifier });
    expect((await RawClient.refusal(`${server.url}?token=forged`)).status).toBe(401);
    const alice = await fixture.connect({ query: 'token=token-alice' });
    const { threadId } = await openThread(alice);
    expect(alice.frames[0]?.type).not.toBe('CPP_AUTH_CHALLENGE');
    expect(
      (await listThreads(await fixture.connect({ query: 'token=token-alice' }))).map((thread) => thread.threadId),
    ).toEqual([threadId]);
  });

  it("keeps each thread its owner's", async () => {
    await fixture.start({ auth: verifier });
    const { threadId } = await openThread(await fixture.connect({ query: 'token=token-alice' }));
    const bob = await fixture.connect({ query: 'token=token-bob' });
    bob.send('CPP_SYNC_REQUEST', { threadId }, { id: 'peek' });
    await expectError(bob, 'NOT_FOUND', { refId: 'peek' });
  });

  it('answers HTTP 500 when it fails', async () => {
    const server = await fixture.start({ auth: () => Promise.reject(new Error('session store down')) });
    expect((await RawClient.refusal(server.url)).status).toBe(500);
  });
});
