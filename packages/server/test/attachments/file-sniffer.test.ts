import { isUtf8 } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { FileSniffer, TextCheck, sniffFile } from '../../src/attachments/attachment-sniffer.js';
import { pdfDocument, pngImage } from '../support/test-files.js';

const bytes = (...values: number[]) => Uint8Array.from(values);
const text = (value: string) => new TextEncoder().encode(value);

/** The file's pieces cut at each of `cuts` (sorted offsets). */
function cutAt(file: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  return [0, ...cuts].map((start, index) => file.subarray(start, cuts[index] ?? file.length));
}

function checked(pieces: readonly Uint8Array[]): boolean {
  const check = new TextCheck();
  for (const piece of pieces) check.update(piece);
  return check.valid && check.complete;
}

/** Text, and bytes that are not: each character of several bytes, and each way UTF-8 can be broken. */
const SAMPLES: Array<[string, Uint8Array]> = [
  ['ASCII', text('plain lines\n')],
  ['two, three and four bytes', text('é€𝄞 a é € 𝄞')],
  ['a NUL', bytes(0x61, 0x00, 0x62)],
  ['a lone continuation byte', bytes(0x61, 0x80, 0x62)],
  ['an overlong NUL', bytes(0x61, 0xc0, 0x80)],
  ['a surrogate', bytes(0xed, 0xa0, 0x80, 0x61)],
  ['past U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80)],
  ['a lead byte no character has', bytes(0x61, 0xf8, 0x88, 0x80, 0x80, 0x80)],
  ['a character cut off at the end', bytes(0x61, 0xe2, 0x82)],
  ['a character cut off by the next', bytes(0xe2, 0x82, 0x61, 0x62)],
];

describe('the text check of an upload in pieces', () => {
  it('says of every cut into two or three pieces what it says of the whole', () => {
    for (const [what, sample] of SAMPLES) {
      const whole = !sample.includes(0) && isUtf8(sample);
      expect(checked([sample]), what).toBe(whole);
      for (let first = 0; first <= sample.length; first += 1) {
        expect(checked(cutAt(sample, [first])), `${what}, cut at ${first}`).toBe(whole);
        for (let second = first; second <= sample.length; second += 1)
          expect(checked(cutAt(sample, [first, second])), `${what}, cut at ${first} and ${second}`).toBe(whole);
      }
    }
  });
});

describe('a file sniffed as its pieces arrive', () => {
  const sniffed = (file: Uint8Array, pieceLength: number) => {
    const sniffer = new FileSniffer();
    for (let start = 0; start < file.length; start += pieceLength)
      sniffer.update(file.subarray(start, start + pieceLength));
    return sniffer.result(1_000_000);
  };

  it('is what the whole file is: an image with its size, a PDF, text far longer than its head', async () => {
    const longText = text(`${'line é €\n'.repeat(5000)}the end`);
    for (const file of [pngImage(30, 20), pdfDocument('Hello'), longText]) {
      expect(await sniffed(file, 100)).toStrictEqual(await sniffFile(file, 1_000_000));
    }
    expect(await sniffed(pngImage(30, 20), 7)).toStrictEqual({ mediaType: 'image/png', width: 30, height: 20 });
    expect(await sniffed(longText, 4099)).toStrictEqual({ mediaType: 'text/plain' });
  });

  it('refuses text that stops being text after its head, and one that ends in the middle of a character', async () => {
    const head = text('x'.repeat(10_000));
    for (const tail of [bytes(0x61, 0x00), bytes(0xff, 0x61), bytes(0xe2, 0x82)]) {
      const file = new Uint8Array([...head, ...tail]);
      await expect(sniffed(file, 1024)).rejects.toThrow(/binary file of no type accepted/);
    }
  });
});
