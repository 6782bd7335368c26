import type { MessageNode, TextPart } from '../node.js';

// Apart from node.ts and its schemas: the client's mirror uses these, and a page's bundle does without zod.

/** A node's text of one part; a node that never reasoned has empty reasoning. */
export function partText(node: Pick<MessageNode, 'content' | 'reasoning'>, part: TextPart): string {
  return part === 'content' ? node.content : (node.reasoning ?? '');
}

/** Sets a node's text of one part; empty reasoning is left out, as a node that never reasoned has none. */
export function setPartText(node: Pick<MessageNode, 'content' | 'reasoning'>, part: TextPart, text: string): void {
  if (part === 'content') node.content = text;
  else if (text.length > 0) node.reasoning = text;
  else delete node.reasoning;
}
