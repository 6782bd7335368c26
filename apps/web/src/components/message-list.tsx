import type { MessageNode } from '@promethea/cpp-protocol';
import type { BranchEntry } from '@promethea/cpp-react';
import { useLayoutEffect, useRef } from 'react';
import { MessageBubble } from './message-bubble.js';

interface MessageListProps {
  entries: BranchEntry[];
  headId: string | null;
  onAnchor(nodeId: string): void;
  onShowBranch(nodeId: string): void;
  onRegenerate(nodeId: string): void;
  onEdit(node: MessageNode): void;
  onDelete(nodeId: string): void;
  /** A message to bring into view (a click in the tree), once it is on the branch. */
  revealId: string | undefined;
  onRevealed(): void;
}

/** How close to the bottom (px) still counts as reading the newest text, so the view follows the stream. */
const FOLLOW_MARGIN = 80;

export function MessageList({ entries, headId, onAnchor, onShowBranch, onRegenerate, onEdit, onDelete, revealId, onRevealed }: MessageListProps) {
  const list = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  const last = entries.at(-1)?.node;

  useLayoutEffect(() => {
    const element = list.current;
    if (element && following.current) element.scrollTop = element.scrollHeight;
  }, [entries.length, last?.id, last?.content.length]);

  useLayoutEffect(() => {
    if (revealId === undefined || !entries.some((entry) => entry.node.id === revealId)) return;
    const message = list.current?.querySelector<HTMLElement>(`[data-node-id="${revealId}"]`);
    message?.scrollIntoView({ block: 'center' });
    message?.focus({ preventScroll: true });
    following.current = false;
    onRevealed();
  }, [revealId, entries, onRevealed]);

  return (
    <div
      ref={list}
      className="message-list"
      role="log"
      aria-label="Conversation"
      aria-relevant="additions"
      tabIndex={0}
      onScroll={(event) => {
        const element = event.currentTarget;
        following.current = element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_MARGIN;
      }}
    >
      {entries.length === 0 && (
        <div className="empty">
          <h2>Ask anything</h2>
          <p>
            While the answer streams, keep typing: sending then <strong>pivots</strong> — the answer stops where you
            are, and the conversation branches from there. <strong>Anchor</strong> any message to branch from it.
          </p>
        </div>
      )}
      {entries.map(({ node, siblingIds, siblingIndex }) => (
        <MessageBubble
          key={node.id}
          node={node}
          siblingIds={siblingIds}
          siblingIndex={siblingIndex}
          isHead={node.id === headId}
          onAnchor={onAnchor}
          onShowBranch={onShowBranch}
          onRegenerate={onRegenerate}
          onEdit={onEdit}
          onDelete={onDelete}
        />
      ))}
    </div>
  );
}
