/**
 * Whatever can sign for a DID: an Ed25519 did:key identity of this SDK's (`DidKeyIdentity`), or your own, e.g. a
 * key held by a hardware token or a wallet. `sign` receives the exact bytes of docs/PROTOCOL.md §23.2 and returns
 * the 64-byte Ed25519 signature.
 */
export interface DidSigner {
  readonly did: string;
  sign(message: Uint8Array): Uint8Array | Promise<Uint8Array>;
}
