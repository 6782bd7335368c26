import type { AuthChallengeFrame } from '@promethea/cpp-protocol';
import type { RawClient } from '../../support/raw-client.js';
import type { TestIdentity } from './did-key-identity.js';

/** The challenge the server sent first on this connection. */
export async function challengeOf(client: RawClient): Promise<AuthChallengeFrame['payload']> {
  return (await client.next('CPP_AUTH_CHALLENGE')).payload;
}

/** Answers the connection's challenge as `identity` and waits for CPP_AUTH_ACCEPTED. */
export async function authenticate(client: RawClient, identity: TestIdentity): Promise<void> {
  const challenge = await challengeOf(client);
  client.send('CPP_AUTH_PROOF', { did: identity.did, nonce: challenge.nonce, signature: identity.signChallenge(challenge) }, { id: 'proof' });
  await client.next('CPP_AUTH_ACCEPTED');
}
