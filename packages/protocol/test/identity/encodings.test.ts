import { decodeBase58, decodeBase64Url, encodeBase58, encodeBase64Url } from '@promethea/cpp-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const bytes = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));

describe('base58btc', () => {
  // Vectors of the base58 draft (draft-msporny-base58) and of Bitcoin's implementation.
  it.each([
    ['', ''],
    ['00', '1'],
    ['0000', '11'],
    ['61', '2g'],
    ['626262', 'a3gV'],
    ['636363', 'aPEr'],
    [Buffer.from('Hello World!').toString('hex'), '2NEpo7TZRRrLZSi2U'],
    [
      Buffer.from('The quick brown fox jumps over the lazy dog.').toString('hex'),
      'USm3fpXnKG5EUBx2ndxBDMPVciP5hGey2Jh4NDv6gmeo1LkMeiKrLJUUBk6Z',
    ],
    ['0000287fb4cd', '11233QC4'],
  ])('writes %s as %j and reads it back', (hex, text) => {
    expect(encodeBase58(bytes(hex))).toBe(text);
    expect(decodeBase58(text)).toEqual(bytes(hex));
  });

  it('reads back whatever it wrote', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (value) => {
        expect(decodeBase58(encodeBase58(value))).toEqual(value);
      }),
    );
  });

  it.each(['0', 'O', 'I', 'l', '+', ' ', 'é'])('refuses %j, outside the alphabet', (character) => {
    expect(decodeBase58(`2g${character}`)).toBeUndefined();
  });
});

describe('unpadded base64url', () => {
  it('writes what Node writes, and reads it back', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (value) => {
        const text = encodeBase64Url(value);
        expect(text).toBe(Buffer.from(value).toString('base64url'));
        expect(decodeBase64Url(text)).toEqual(value);
      }),
    );
  });

  it.each([
    ['padding', 'AAE='],
    ['the standard alphabet', '+/8'],
    ['a length no bytes have', 'AAAAA'],
    ['stray low bits (not the canonical text of its byte)', 'AB'],
    ['white space', 'AA E'],
  ])('refuses %s', (_, text) => {
    expect(decodeBase64Url(text)).toBeUndefined();
  });
});
