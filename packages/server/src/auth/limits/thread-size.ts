import type { ThreadGraph } from '@promethea/cpp-protocol';

/** What a thread holds, as the thread limits count it. */
export interface ThreadSize {
  nodes: number;
  /** Bytes of the nodes' text and reasoning as a sync carries them: JSON-escaped, in UTF-8 (see `jsonTextBytes`). */
  bytes: number;
}

export function threadSize(graph: ThreadGraph): ThreadSize {
  let bytes = 0;
  const nodes = Object.values(graph.nodes);
  for (const node of nodes) bytes += jsonTextBytes(node.content) + jsonTextBytes(node.reasoning ?? '');
  return { nodes: nodes.length, bytes };
}

/** Characters JSON writes as more than themselves: the quote, the backslash, control characters, lone surrogates. */
const ESCAPED = /["\\\u0000-\u001f\ud800-\udfff]/;
const SHORT_ESCAPES = new Set([0x22, 0x5c, 0x08, 0x09, 0x0a, 0x0c, 0x0d]);

/**
 * The UTF-8 bytes of `text` inside a JSON string, quotes aside: what it adds to a frame. A control character takes
 * 6 bytes there (`\u0001`), so a limit on plain UTF-8 bytes would let a thread of them sync 6 times larger than the
 * limit says (issue 21). Text without such characters, nearly all of it, is counted without a second pass.
 */
export function jsonTextBytes(text: string): number {
  const bytes = Buffer.byteLength(text);
  if (!ESCAPED.test(text)) return bytes;
  let extra = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (SHORT_ESCAPES.has(code)) extra += 1;
    else if (code < 0x20) extra += 5;
    else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(index + 1);
      // A pair is 4 bytes of UTF-8 either way; a lone half is `\udXXX` (6 bytes) where Buffer counted U+FFFD (3).
      if (code <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) index += 1;
      else extra += 3;
    }
  }
  return bytes + extra;
}
