import { describe, expect, it } from 'vitest';
import { TEXT_PARTS, TextPartSchema, partText, setPartText } from '@promethea/cpp-protocol';

describe('the text parts of a node', () => {
  // The one list every loop over a node's texts walks (the cluster's copies, the stores, the client): a part added to
  // the schema alone would be streamed but never copied, stored or cut.
  it('are listed once, as the parts a chunk may stream into', () => {
    expect(TEXT_PARTS).toEqual(['content', 'reasoning']);
    expect(TextPartSchema.options).toEqual(TEXT_PARTS);
  });

  it('are read and written by name; a node that never reasoned has no reasoning field, not an empty one', () => {
    const node: { content: string; reasoning?: string } = { content: 'Answer' };
    expect(TEXT_PARTS.map((part) => partText(node, part))).toEqual(['Answer', '']);
    setPartText(node, 'reasoning', 'Because');
    setPartText(node, 'content', 'Answer, then more');
    expect(node).toEqual({ content: 'Answer, then more', reasoning: 'Because' });
    setPartText(node, 'reasoning', '');
    expect(node).toEqual({ content: 'Answer, then more' });
  });
});
