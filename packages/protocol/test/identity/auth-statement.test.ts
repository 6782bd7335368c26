import { authStatementBytes, decodeBase64Url, encodeBase64Url } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { DID_KEY, NONCE } from '../support/sample-frames.js';

const statement = {
  did: DID_KEY,
  audience: 'wss://chat.example/v1/cpp/session',
  nonce: NONCE,
  expiresAt: 1781100030000,
};

describe('the authentication statement', () => {
  it('is the documented lines, in UTF-8', () => {
    const text = new TextDecoder().decode(authStatementBytes(statement));
    expect(text).toBe(
      `CPP-AUTH-v1\niss:${DID_KEY}\naud:wss://chat.example/v1/cpp/session\nnonce:${NONCE}\nexp:1781100030000`,
    );
  });

  it.each([
    ['an audience with a line break', { ...statement, audience: 'wss://a.example\nexp:1' }],
    ['a nonce with a carriage return', { ...statement, nonce: `${NONCE}\r` }],
    ['a fractional expiry', { ...statement, expiresAt: 1.5 }],
  ])('has one encoding only: %s is refused', (_, ambiguous) => {
    expect(() => authStatementBytes(ambiguous)).toThrow(RangeError);
  });
});

describe('base64url', () => {
  it('round-trips bytes without padding', () => {
    const bytes = Uint8Array.from([0xfb, 0xff, 0xfe, 0x00, 0x01]);
    expect(encodeBase64Url(bytes)).toBe('-__-AAE');
    expect(decodeBase64Url('-__-AAE')).toEqual(bytes);
  });

  it('decodes nothing that is not base64url', () => {
    expect(decodeBase64Url('+//+AAE=')).toBeUndefined();
  });
});
