import type { BranchEntry } from '@promethea/cpp-react';
import { useCallback, useLayoutEffect, useRef, useState, type ReactNode } from 'react';
import { moveFocus } from '../lib/roving-focus.js';
import { MessageBubble } from './message-bubble.js';
import type { MessageActionHandlers } from './message-actions.js';

interface MessageListProps extends MessageActionHandlers {
  entries: BranchEntry[];
  headId: string | null;
  onShowBranch(nodeId: string): void;
  onEdit(nodeId: string, userPrompt: string): void;
  /** A message to bring into view (a click in the tree), once it is on the branch. */
  revealId: string | undefined;
  onRevealed(): void;
  /** Shown while the branch is empty. */
  empty: ReactNode;
}

/** How close to the bottom (px) still counts as reading the newest text, so the view follows the stream. */
const FOLLOW_MARGIN = 80;

export function MessageList(props: MessageListProps) {
  const { entries, headId, revealId, onRevealed, empty, onDelete } = props;
  const list = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  // The message that is the list's one tab stop: the last one focused, else the newest.
  const [focusedId, setFocusedId] = useState<string>();
  const last = entries.at(-1)?.node;
  const focusStopId = entries.some((entry) => entry.node.id === focusedId) ? focusedId : last?.id;

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

  // The focus is in the deleted message's confirm, which goes with it: it moves up to the message above, the
  // deleted one's parent, which stays.
  const deleteMessage = useCallback(
    (nodeId: string) => {
      const message = list.current?.querySelector<HTMLElement>(`[data-node-id="${nodeId}"]`);
      if (list.current && message) moveFocus(list.current, message, 'ArrowUp');
      onDelete(nodeId);
    },
    [onDelete],
  );

  return (
    <div
      ref={list}
      className="message-list"
      role="log"
      aria-label="Conversation"
      aria-relevant="additions"
      aria-describedby="message-list-keys"
      onScroll={(event) => {
        const element = event.currentTarget;
        following.current = element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_MARGIN;
      }}
      onFocus={(event) => {
        const id = (event.target as HTMLElement).closest<HTMLElement>('article.message')?.dataset.nodeId;
        if (id !== undefined) setFocusedId(id);
      }}
      onKeyDown={(event) => {
        if (list.current && moveFocus(list.current, event.target as HTMLElement, event.key)) event.preventDefault();
      }}
    >
      <p id="message-list-keys" className="visually-hidden">
        Up and down arrows move between messages; left and right arrows reach a message&apos;s actions.
      </p>
      {entries.length === 0 && empty}
      {entries.map(({ node, siblingIds, siblingIndex }) => (
        <MessageBubble
          key={node.id}
          node={node}
          siblingIds={siblingIds}
          siblingIndex={siblingIndex}
          isHead={node.id === headId}
          isFocusStop={node.id === focusStopId}
          onShowBranch={props.onShowBranch}
          onEdit={props.onEdit}
          onAnchor={props.onAnchor}
          onRegenerate={props.onRegenerate}
          onContinue={props.onContinue}
          onDelete={deleteMessage}
          report={props.report}
        />
      ))}
    </div>
  );
}
