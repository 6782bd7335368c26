import { describe, expect, it } from 'vitest';
import { JsonDocumentError, jsonArrayItems } from '../../src/threads/json-array-items.js';

/** The text's UTF-8 bytes in pieces of `size`, as a file's read stream would give them. */
async function* bytesOf(text: string, size: number): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

async function itemsOf(text: string, size = 3) {
  const items = [];
  for await (const item of jsonArrayItems(bytesOf(text, size))) items.push(item);
  return items;
}

describe('jsonArrayItems', () => {
  const elements = [
    { text: 'brackets ]} and braces {[ in a string, an escaped quote \\" and backslash \\\\' },
    [1, [2, { three: 'drei' }]],
    { emoji: '🚀 Grüße', nested: { empty: [], object: {} } },
  ];

  it.each([1, 2, 3, 7, 1024])(
    'gives each element of the top-level array, whatever the pieces (%i bytes)',
    async (size) => {
      const text = `\ufeff \n[ ${elements.map((element) => JSON.stringify(element, null, size % 2 === 0 ? 2 : 0)).join(' ,\n')} ]\r\n`;
      expect(await itemsOf(text, size)).toEqual(elements.map((value, index) => ({ value, index, inArray: true })));
    },
  );

  it('gives a document that is an object as one item, and an empty array as none', async () => {
    expect(await itemsOf('{"format":"cpp-thread"}')).toEqual([
      { value: { format: 'cpp-thread' }, index: 0, inArray: false },
    ]);
    expect(await itemsOf(' [ ] ')).toEqual([]);
  });

  it.each([
    ['"text"', 'the document is neither a JSON array nor an object'],
    ['[{"a":1} {"b":2}]', 'expected , or ] after element 1 at byte 9'],
    ['[{"a":1},]', 'element 2 of the array is not an object (byte 9)'],
    ['[1, 2]', 'element 1 of the array is not an object (byte 1)'],
    ['[{"a":1}', 'the JSON document ends early, after 8 bytes'],
    ['[{"a":"1}]', 'the JSON document ends early, after 10 bytes'],
    ['[{"a":1}] x', 'text after the end of the JSON document at byte 10'],
    ['[{"a":tru}]', 'element 1 of the array is not valid JSON: '],
  ])('refuses %j: %s', async (text, message) => {
    const reading = itemsOf(text);
    await expect(reading).rejects.toThrow(JsonDocumentError);
    await expect(reading).rejects.toThrow(message);
  });
});
