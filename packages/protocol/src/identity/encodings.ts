// The two encodings of CPP identities, on the platform's own primitives: a few lines each, where @scure/base was
// 1.7 KB gzip of a browser client's 12 KB. Both decoders accept only the one canonical text of each byte string.

/** Bitcoin's base58 alphabet, which did:key's multibase prefix `z` (base58btc) names. */
const BASE58_ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58btc: the bytes as one big number in base 58, each leading zero byte written as `1`. */
export function encodeBase58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros += 1;
  let value = 0n;
  for (const byte of bytes) value = (value << 8n) | BigInt(byte);
  let text = '';
  for (; value > 0n; value /= 58n) text = BASE58_ALPHABET[Number(value % 58n)] + text;
  return '1'.repeat(zeros) + text;
}

/** `undefined` for text with a character outside the alphabet. */
export function decodeBase58(text: string): Uint8Array | undefined {
  let ones = 0;
  while (ones < text.length && text[ones] === '1') ones += 1;
  let value = 0n;
  for (const character of text) {
    const digit = BASE58_ALPHABET.indexOf(character);
    if (digit < 0) return undefined;
    value = value * 58n + BigInt(digit);
  }
  const bytes: number[] = [];
  for (; value > 0n; value >>= 8n) bytes.push(Number(value & 0xffn));
  return Uint8Array.from([...new Array<number>(ones).fill(0), ...bytes.reverse()]);
}

/** Signatures, nonces and keys travel as unpadded base64url (RFC 4648 §5). */
export function encodeBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** `undefined` for text that is not unpadded base64url, or not the canonical text of its bytes (stray low bits). */
export function decodeBase64Url(text: string): Uint8Array | undefined {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return undefined;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  const bytes = Uint8Array.from(binary, (character) => character.charCodeAt(0));
  return encodeBase64Url(bytes) === text ? bytes : undefined;
}
