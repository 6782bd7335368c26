// Apart from node.ts and its schemas: the client's mirror uses these, and a page's bundle does without zod. So the
// list of parts is written here, and node.ts builds its schema from it.

/** The two texts of a node that stream: the answer (`content`) and the model's reasoning, in the node's order. */
export const TEXT_PARTS = ['content', 'reasoning'] as const;

export type TextPart = (typeof TEXT_PARTS)[number];

/** The texts of a node: its answer, and its reasoning when the model reasoned. */
interface NodeTexts {
  content: string;
  reasoning?: string;
}

/** A node's text of one part; a node that never reasoned has empty reasoning. */
export function partText(node: NodeTexts, part: TextPart): string {
  return part === 'content' ? node.content : (node.reasoning ?? '');
}

/** Sets a node's text of one part; empty reasoning is left out, as a node that never reasoned has none. */
export function setPartText(node: NodeTexts, part: TextPart, text: string): void {
  if (part === 'content') node.content = text;
  else if (text.length > 0) node.reasoning = text;
  else delete node.reasoning;
}
