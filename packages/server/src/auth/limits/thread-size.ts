import type { MessageNode, ThreadGraph } from '@promethea/cpp-protocol';

/** What a thread holds, as the thread limits count it. */
export interface ThreadSize {
  nodes: number;
  /** Bytes of the nodes' text and reasoning as a sync carries them: JSON-escaped, in UTF-8 (see `jsonTextBytes`). */
  bytes: number;
}

/**
 * Counted on every prompt, pivot, regenerate and continue. Each node's count is kept while its text is the same
 * string, so only the nodes whose text changed since the last count are read again: counting all of a 10,000-node
 * thread's 3 MB of text took 10–15 ms of the event loop on every prompt here, the nodes alone ~1.5 ms.
 */
export function threadSize(graph: ThreadGraph): ThreadSize {
  let bytes = 0;
  let nodes = 0;
  for (const id in graph.nodes) {
    bytes += nodeTextBytes(graph.nodes[id]!);
    nodes += 1;
  }
  return { nodes, bytes };
}

interface CountedText {
  content: string;
  reasoning: string;
  bytes: number;
}

/** The last count of each node's text, with the strings it counted: the cache holds no text of its own. */
const counted = new WeakMap<MessageNode, CountedText>();

function nodeTextBytes(node: MessageNode): number {
  const reasoning = node.reasoning ?? '';
  const last = counted.get(node);
  // The same strings compare by reference, at once; text that did change is counted again.
  if (last && last.content === node.content && last.reasoning === reasoning) return last.bytes;
  const bytes = jsonTextBytes(node.content) + jsonTextBytes(reasoning);
  counted.set(node, { content: node.content, reasoning, bytes });
  return bytes;
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
