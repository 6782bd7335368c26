import type { AuthChallengeFrame } from '@promethea/cpp-protocol';
import type { RawClient } from '../../support/raw-client.js';
import type { ServerFixture } from '../../support/start-server.js';
import type { TestIdentity } from './did-key-identity.js';

/** The challenge the server sent first on this connection. */
export async function challengeOf(client: RawClient): Promise<AuthChallengeFrame['payload']> {
  return (await client.next('CPP_AUTH_CHALLENGE')).payload;
}

/** Answers the connection's challenge (taken already, or next) as `identity`, and waits for CPP_AUTH_ACCEPTED. */
export async function authenticate(
  client: RawClient,
  identity: TestIdentity,
  taken?: AuthChallengeFrame['payload'],
): Promise<void> {
  const challenge = taken ?? (await challengeOf(client));
  client.send(
    'CPP_AUTH_PROOF',
    { did: identity.did, nonce: challenge.nonce, signature: identity.signChallenge(challenge) },
    { id: 'proof' },
  );
  await client.next('CPP_AUTH_ACCEPTED');
}

/** A connection of the fixture's server, claiming `identity` at the upgrade and proving it. */
export async function connectAs(fixture: ServerFixture, identity: TestIdentity): Promise<RawClient> {
  const client = await fixture.connect({ did: identity.did });
  await authenticate(client, identity);
  return client;
}
