import type { GraphDraft } from './graph-draft.js';
import { cutToolCalls } from './tool-calls.js';

/** An answer that was streaming, halted: its text and reasoning as the clients saw them. */
export interface HaltedAnswer {
  nodeId: string;
  content: string;
  reasoning?: string;
}

/** Keeps each halted answer `interrupted` at its cut, its tool calls cut with its text. */
export function keepHalted(draft: GraphDraft, halted: readonly HaltedAnswer[] | undefined): void {
  for (const { nodeId, content, reasoning } of halted ?? []) {
    draft.update(nodeId, {
      status: 'interrupted',
      content,
      reasoning,
      toolCalls: cutToolCalls(draft.get(nodeId).toolCalls ?? [], content.length),
    });
  }
}
