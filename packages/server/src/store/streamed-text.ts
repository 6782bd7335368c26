import { TEXT_PARTS, partText, setPartText, type MessageNode, type TextPart } from '@promethea/cpp-protocol';
import type { NodeRecord } from './graph-records.js';

/** One saved piece of a streaming node's text: its characters from `offset` on (UTF-16 code units). */
export interface TextPiece {
  offset: number;
  text: string;
}

/** A piece as the SQL stores read it back, with its node and the part of the node (content or reasoning) it is of. */
export interface TextPieceRow extends TextPiece {
  nodeId: string;
  part: TextPart;
}

/**
 * The text of a streaming node: what its row holds (empty when its answer started), with its saved pieces written
 * over it in order of offset, each from its offset on. A piece beyond the end of the text so far would leave a gap:
 * it and every piece after it are left out, so the text is always a prefix of what was streamed.
 */
export function spellStreamedText(content: string, pieces: Iterable<TextPiece>): string {
  let text = content;
  for (const { offset, text: piece } of [...pieces].sort((a, b) => a.offset - b.offset)) {
    if (offset > text.length) break;
    text = text.slice(0, offset) + piece;
  }
  return text;
}

/** Pieces by node. */
export function piecesByNode(pieces: readonly TextPieceRow[]): Map<string, TextPieceRow[]> {
  const byNode = new Map<string, TextPieceRow[]>();
  for (const piece of pieces) {
    const own = byNode.get(piece.nodeId);
    if (own) own.push(piece);
    else byNode.set(piece.nodeId, [piece]);
  }
  return byNode;
}

/** A node's content and reasoning, each spelled from its row's text and the node's pieces of that part. */
export function spellParts<Text extends Pick<MessageNode, 'content' | 'reasoning'>>(
  text: Text,
  pieces: readonly TextPieceRow[],
): Text {
  const spelled = { ...text };
  for (const part of TEXT_PARTS) {
    const own = pieces.filter((piece) => piece.part === part);
    if (own.length > 0) setPartText(spelled, part, spellStreamedText(partText(text, part), own));
  }
  return spelled;
}

/** `records` with the text of each streaming node spelled from its pieces. */
export function withStreamedText<Stored extends NodeRecord>(
  records: Stored[],
  pieces: readonly TextPieceRow[],
): Stored[] {
  if (pieces.length === 0) return records;
  const byNode = piecesByNode(pieces);
  return records.map((record) => {
    const own = record.status === 'streaming' ? byNode.get(record.id) : undefined;
    return own ? spellParts(record, own) : record;
  });
}

/** The answers a change leaves no longer streaming: their commit writes their whole text, and drops their pieces. */
export function endedAnswerIds(nodes: readonly MessageNode[]): string[] {
  return nodes.filter((node) => node.role === 'assistant' && node.status !== 'streaming').map((node) => node.id);
}
