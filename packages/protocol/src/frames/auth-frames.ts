import { z } from 'zod';
import { TimestampSchema, clientFrame, serverFrame } from '../envelope.js';
import { DID_MAX_LENGTH, DID_PATTERN } from '../identity/did.js';

export const DidSchema = z.string().max(DID_MAX_LENGTH).regex(DID_PATTERN, 'expected a DID: did:<method>:<id>');

/** Fresh random bytes as unpadded base64url: 16 bytes at least. */
export const NonceSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{22,128}$/, 'expected a nonce: 22-128 characters of base64url');

/** An Ed25519 signature (64 bytes) as unpadded base64url. */
const SignatureSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-]{86}$/, 'expected an Ed25519 signature: 86 characters of base64url');

/** The endpoint a challenge is for: one URL, no white space. */
const AudienceSchema = z.string().min(1).max(512).regex(/^\S+$/, 'expected an endpoint URL');

/** Server → client, first frame of the session when proof of possession is asked for: sign this. */
export const AuthChallengeFrameSchema = serverFrame(
  'CPP_AUTH_CHALLENGE',
  z.object({ nonce: NonceSchema, audience: AudienceSchema, issuedAt: TimestampSchema, expiresAt: TimestampSchema }),
);

/** Client → server: the challenge signed with the key of `did` (an Ed25519 did:key). */
export const AuthProofFrameSchema = clientFrame(
  'CPP_AUTH_PROOF',
  z.object({ did: DidSchema, nonce: NonceSchema, signature: SignatureSchema }),
);

/** Server → client: the proof holds; the connection acts as `did` from now on. */
export const AuthAcceptedFrameSchema = serverFrame('CPP_AUTH_ACCEPTED', z.object({ did: DidSchema }));

export type AuthChallengeFrame = z.infer<typeof AuthChallengeFrameSchema>;
export type AuthProofFrame = z.infer<typeof AuthProofFrameSchema>;
export type AuthAcceptedFrame = z.infer<typeof AuthAcceptedFrameSchema>;
