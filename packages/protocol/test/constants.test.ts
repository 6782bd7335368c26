import { describe, expect, it } from 'vitest';
import {
  CPP_DID_HEADER,
  CPP_DID_QUERY_PARAMETER,
  CPP_SESSION_PATH,
  CPP_SUBPROTOCOL,
  CloseCode,
  DEFAULT_MAX_FRAME_BYTES,
} from '@promethea/cpp-protocol';

// These values are fixed by the seed spec and docs/PROTOCOL.md; other implementations depend on them.
describe('protocol constants', () => {
  it('name the handshake as the spec does', () => {
    expect(CPP_SESSION_PATH).toBe('/v1/cpp/session');
    expect(CPP_SUBPROTOCOL).toBe('cpp-v1.0.0');
    expect(CPP_DID_HEADER).toBe('X-Client-Sovereign-DID');
    expect(CPP_DID_QUERY_PARAMETER).toBe('did');
  });

  it('limit frames to 1 MiB by default', () => {
    expect(DEFAULT_MAX_FRAME_BYTES).toBe(1_048_576);
  });

  it('use the documented close codes', () => {
    expect(CloseCode).toEqual({
      NORMAL: 1000,
      GOING_AWAY: 1001,
      MESSAGE_TOO_BIG: 1009,
      UNAUTHORIZED: 4401,
      FORBIDDEN: 4403,
      TIMEOUT: 4408,
      TOO_MANY_REQUESTS: 4429,
      INTERNAL_ERROR: 4500,
    });
  });
});
