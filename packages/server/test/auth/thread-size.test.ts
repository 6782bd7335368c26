import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonTextBytes } from '../../src/auth/limits/thread-size.js';

const asJson = (text: string) => Buffer.byteLength(JSON.stringify(text)) - 2;

describe('the text bytes the thread limit counts', () => {
  it('are the UTF-8 bytes of the text as JSON writes it, escapes included', () => {
    for (const text of ['plain', '🚀 é', '"\\', '\n\t\r\b\f', '\u0001\u001f', '\ud800', 'a\udc00b', '\ud83d\ude80\ud83d']) {
      expect(jsonTextBytes(text), JSON.stringify(text)).toBe(asJson(text));
    }
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => jsonTextBytes(text) === asJson(text)));
  });
});
