/** One value of a streamed JSON document: an element of its top-level array, or the document when it is no array. */
export interface JsonItem {
  value: unknown;
  /** Its place in the array (0-based); 0 for a document that is no array. */
  index: number;
  inArray: boolean;
}

/** The document is not well-formed JSON, or not an array or object at its top; the message says where. */
export class JsonDocumentError extends Error {
  override readonly name = 'JsonDocumentError';
}

enum Byte {
  Tab = 0x09,
  LineFeed = 0x0a,
  CarriageReturn = 0x0d,
  Space = 0x20,
  Quote = 0x22,
  Comma = 0x2c,
  OpenBracket = 0x5b,
  Backslash = 0x5c,
  CloseBracket = 0x5d,
  OpenBrace = 0x7b,
  CloseBrace = 0x7d,
}

enum State {
  /** Before the document's first value. */
  Start,
  /** Right after `[`: an element or `]`. */
  FirstElement,
  /** After a comma: an element. */
  NextElement,
  /** Inside an element (or the document), `depth` brackets deep. */
  Element,
  /** After an element: a comma or `]`. */
  AfterElement,
  /** After the document: white space only. */
  End,
}

const UTF8_BOM = [0xef, 0xbb, 0xbf];

/**
 * The elements of a JSON document's top-level array, one at a time as its bytes stream in, each parsed by
 * `JSON.parse`: what the reader holds is one element, whatever the document's size. A document whose top is an
 * object is one item. Elements must be objects or arrays (those of every import format are). Structural
 * characters are ASCII, which no byte of a multi-byte UTF-8 character can be, so the bytes are split as they come.
 */
export async function* jsonArrayItems(source: AsyncIterable<Buffer>): AsyncGenerator<JsonItem> {
  let state = State.Start;
  let inArray = false;
  let index = 0;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let pieces: Buffer[] = [];
  let offset = 0;

  for await (const chunk of source) {
    let elementStart = state === State.Element ? 0 : -1;
    let nextQuote = -1;
    let nextBackslash = -1;
    for (let at = 0; at < chunk.length; at += 1) {
      const byte = chunk[at]!;
      if (state === State.Element) {
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === Byte.Backslash) escaped = true;
          else if (byte === Byte.Quote) inString = false;
          else {
            // Most of a document is text: the search for its next quote or backslash is native, not byte by byte,
            // and each search's answer is kept until it is passed (text without a backslash would search to the
            // chunk's end at every string).
            if (nextQuote < at) nextQuote = positionOf(chunk, Byte.Quote, at);
            if (nextBackslash < at) nextBackslash = positionOf(chunk, Byte.Backslash, at);
            at = Math.min(nextQuote, nextBackslash) - 1;
          }
          continue;
        }
        if (byte === Byte.Quote) inString = true;
        else if (byte === Byte.OpenBrace || byte === Byte.OpenBracket) depth += 1;
        else if (byte === Byte.CloseBrace || byte === Byte.CloseBracket) {
          depth -= 1;
          if (depth === 0) {
            pieces.push(chunk.subarray(elementStart, at + 1));
            yield { value: parseElement(pieces, index, inArray), index, inArray };
            pieces = [];
            index += 1;
            elementStart = -1;
            state = inArray ? State.AfterElement : State.End;
          }
        }
        continue;
      }
      const position = offset + at;
      if (isWhiteSpace(byte) || (position < UTF8_BOM.length && byte === UTF8_BOM[position])) continue;
      switch (state) {
        case State.Start:
          if (byte === Byte.OpenBracket) {
            inArray = true;
            state = State.FirstElement;
            continue;
          }
          if (byte !== Byte.OpenBrace)
            throw new JsonDocumentError('the document is neither a JSON array nor an object');
          break;
        case State.FirstElement:
          if (byte === Byte.CloseBracket) {
            state = State.End;
            continue;
          }
          break;
        case State.AfterElement:
          if (byte === Byte.Comma) state = State.NextElement;
          else if (byte === Byte.CloseBracket) state = State.End;
          else throw new JsonDocumentError(`expected , or ] after element ${index} at byte ${position}`);
          continue;
        case State.End:
          throw new JsonDocumentError(`text after the end of the JSON document at byte ${position}`);
      }
      // An element (or the document) begins here.
      if (byte !== Byte.OpenBrace && byte !== Byte.OpenBracket)
        throw new JsonDocumentError(`element ${index + 1} of the array is not an object (byte ${position})`);
      state = State.Element;
      depth = 1;
      elementStart = at;
    }
    if (state === State.Element) pieces.push(chunk.subarray(elementStart));
    offset += chunk.length;
  }
  if ((state as State) !== State.End)
    throw new JsonDocumentError(`the JSON document ends early, after ${offset} bytes`);
}

/** Where `byte` next occurs from `from` on; the chunk's length when it does not. */
function positionOf(chunk: Buffer, byte: number, from: number): number {
  const position = chunk.indexOf(byte, from);
  return position < 0 ? chunk.length : position;
}

function isWhiteSpace(byte: number): boolean {
  return byte === Byte.Space || byte === Byte.LineFeed || byte === Byte.CarriageReturn || byte === Byte.Tab;
}

function parseElement(pieces: readonly Buffer[], index: number, inArray: boolean): unknown {
  const text = Buffer.concat(pieces).toString('utf8');
  try {
    return JSON.parse(text);
  } catch (error) {
    const where = inArray ? `element ${index + 1} of the array` : 'the document';
    throw new JsonDocumentError(`${where} is not valid JSON: ${(error as Error).message}`);
  }
}
