/** What a client signs to prove that it holds the key of `did`, for one challenge of one endpoint. */
export interface AuthStatement {
  did: string;
  /** The challenge's `audience`: the endpoint the client connected to. */
  audience: string;
  nonce: string;
  expiresAt: number;
}

const STATEMENT_VERSION = 'CPP-AUTH-v1';

/**
 * The exact bytes signed: UTF-8 lines `CPP-AUTH-v1`, `iss:…` (the DID), `aud:…`, `nonce:…`, `exp:…`, joined by `\n`. The first
 * line keeps a CPP proof from ever being valid as any other signed message; none of the fields may hold a line
 * break, so every statement has exactly one encoding, in every language.
 */
export function authStatementBytes(statement: AuthStatement): Uint8Array {
  const fields = [statement.did, statement.audience, statement.nonce];
  if (fields.some((field) => /[\r\n]/.test(field)) || !Number.isSafeInteger(statement.expiresAt)) {
    throw new RangeError('an authentication statement has single-line fields and an integer expiry');
  }
  const lines = [
    STATEMENT_VERSION,
    `iss:${statement.did}`,
    `aud:${statement.audience}`,
    `nonce:${statement.nonce}`,
    `exp:${statement.expiresAt}`,
  ];
  return new TextEncoder().encode(lines.join('\n'));
}
