import { applyChange, getNode, type MessageNode, type ThreadGraph, type TreeChange } from '@promethea/cpp-protocol';

/** What a thread holds, as the thread limits count it. */
export interface ThreadSize {
  nodes: number;
  /** Bytes of the nodes' text and reasoning as a sync carries them: JSON-escaped, in UTF-8 (see `jsonTextBytes`). */
  bytes: number;
}

/**
 * What the last count of a graph found, kept for its next count: the text of the nodes that did not stream, which
 * only a change replaces, summed; the streaming nodes, whose text grows chunk by chunk, by id.
 */
interface Tally {
  nodes: ThreadGraph['nodes'];
  version: number;
  count: number;
  settledBytes: number;
  streamingIds: string[];
}

const tallies = new WeakMap<ThreadGraph, Tally>();

/**
 * Counted on every prompt, pivot, regenerate and continue, before anything is halted or answered. The nodes are
 * walked once per graph (a load, a reload that replaced them, a change applied without `applyCountedChange`); after
 * that only the nodes a change touches and the text of the streaming one are read. Walking the nodes of a thread
 * that pivots grew with every pivot (0.2 ms at 900 nodes, 1.7 ms at 10,000 here, in front of every HALTED), and
 * measuring its text too took 10–15 ms for 3 MB.
 */
export function threadSize(graph: ThreadGraph): ThreadSize {
  let tally = tallies.get(graph);
  if (tally?.nodes !== graph.nodes || tally.version !== graph.version) {
    tally = countNodes(graph);
    tallies.set(graph, tally);
  }
  let bytes = tally.settledBytes;
  for (const id of tally.streamingIds) {
    const node = getNode(graph, id);
    if (node) bytes += nodeTextBytes(node);
  }
  return { nodes: tally.count, bytes };
}

/** `applyChange`, with the graph's count following the change when it counted the version the change was planned on. */
export function applyCountedChange(graph: ThreadGraph, change: TreeChange): void {
  const tally = tallies.get(graph);
  if (tally?.nodes !== graph.nodes || tally.version !== graph.version || change.baseVersion !== graph.version) {
    applyChange(graph, change);
    return;
  }
  let { count, settledBytes } = tally;
  const leaving = [...(change.removedNodeIds ?? []), ...change.nodes.map((node) => node.id)];
  // The text of the nodes the change removes or replaces leaves the count, read before the change replaces them.
  for (const id of leaving) {
    const before = getNode(graph, id);
    if (!before) continue;
    count -= 1;
    if (!tally.streamingIds.includes(id)) settledBytes -= nodeTextBytes(before);
  }
  const streamingIds = tally.streamingIds.filter((id) => !leaving.includes(id));
  for (const node of change.nodes) {
    count += 1;
    if (node.status === 'streaming') streamingIds.push(node.id);
    else settledBytes += nodeTextBytes(node);
  }
  applyChange(graph, change);
  Object.assign(tally, { version: graph.version, count, settledBytes, streamingIds });
}

function countNodes(graph: ThreadGraph): Tally {
  const tally: Tally = { nodes: graph.nodes, version: graph.version, count: 0, settledBytes: 0, streamingIds: [] };
  for (const id in graph.nodes) {
    const node = graph.nodes[id]!;
    tally.count += 1;
    if (node.status === 'streaming') tally.streamingIds.push(id);
    else tally.settledBytes += nodeTextBytes(node);
  }
  return tally;
}

function nodeTextBytes(node: MessageNode): number {
  return jsonTextBytes(node.content) + jsonTextBytes(node.reasoning ?? '');
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
