import type { MessageNode } from '@promethea/cpp-protocol';
import type { BranchEntry } from '@promethea/cpp-react';
import { useCallback, useLayoutEffect, useRef, useState, type CSSProperties, type ReactNode } from 'react';
import { outsideModelView } from '../lib/model-view.js';
import { moveFocus } from '../lib/roving-focus.js';
import { MessageBubble, SideAnswer } from './message-bubble.js';
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
  /** The connection is down: a streaming answer shows as cut off by it. */
  connectionLost: boolean;
  /** Messages sent while the connection is down, shown below the branch until the server has them. */
  pending: readonly { id: number; text: string }[];
  /** This browser's DID, once known (see MessageBubble). */
  ownDid: string | undefined;
}

/** How close to the bottom (px) still counts as reading the newest text, so the view follows the stream. */
const FOLLOW_MARGIN = 80;

/**
 * A switch of branches at the fork of the message at `index` (the node `nodeId` until the switch shows): the message
 * that takes its place is kept `offset` px from the list's top, where the one switched away from was.
 */
interface PlaceKept {
  index: number;
  nodeId: string;
  offset: number;
}

/** The control of a message that had the focus, to give it back in the message that replaces it. */
interface FocusKept {
  element: HTMLElement;
  index: number;
  /** The accessible name of a switcher button ("Previous branch"), to focus the same one; else the message. */
  control: string | undefined;
}

export function MessageList(props: MessageListProps) {
  const { entries, headId, revealId, onRevealed, empty, onDelete, onShowBranch, connectionLost, pending } = props;
  const list = useRef<HTMLDivElement>(null);
  const following = useRef(true);
  // Shown while the person reads above the end: a way back to the newest text.
  const [awayFromLatest, setAwayFromLatest] = useState(false);
  const placeKept = useRef<PlaceKept>(undefined);
  const focusKept = useRef<FocusKept>(undefined);
  // The message that is the list's one tab stop: the last one focused, else the newest.
  const [focusedId, setFocusedId] = useState<string>();
  const last = entries.at(-1)?.node;
  const focusStopId = entries.some((entry) => entry.node.id === focusedId) ? focusedId : last?.id;
  const lastUserId = entries.findLast((entry) => entry.node.role === 'user')?.node.id;
  const unseen = outsideModelView(entries);

  const follow = useCallback((value: boolean) => {
    following.current = value;
    setAwayFromLatest(!value);
  }, []);

  const scrollToLatest = useCallback(() => {
    const element = list.current;
    if (element) element.scrollTop = element.scrollHeight;
  }, []);

  // A message the person just sent is what they look at next, wherever they had scrolled to: the view goes to it and
  // follows its answer, as the big chat apps do.
  const shownUserId = useRef(lastUserId);
  useLayoutEffect(() => {
    if (lastUserId === shownUserId.current) return;
    // Appended: at the end of the branch, or just above its answer.
    const appended =
      shownUserId.current !== undefined && entries.slice(-2).some((entry) => entry.node.id === lastUserId);
    shownUserId.current = lastUserId;
    if (appended) follow(true);
  }, [lastUserId, entries, follow]);
  useLayoutEffect(() => {
    if (pending.length > 0) follow(true);
  }, [pending.length, follow]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: the list follows each change of its newest text.
  useLayoutEffect(() => {
    if (following.current) scrollToLatest();
  }, [entries.length, last?.id, last?.content.length, last?.status, pending.length, scrollToLatest]);

  // After a switch of branches, the message that replaced the one switched is where that one was; the focus, if it
  // was in the message that went, goes to the same place in the one that came.
  useLayoutEffect(() => {
    const element = list.current;
    if (!element) return;
    const place = placeKept.current;
    if (place && entries[place.index] && entries[place.index]!.node.id !== place.nodeId) {
      placeKept.current = undefined;
      const message = element.querySelectorAll<HTMLElement>('article.message')[place.index];
      if (message) {
        element.scrollTop += message.getBoundingClientRect().top - element.getBoundingClientRect().top - place.offset;
        follow(element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_MARGIN);
      }
    }
    const kept = focusKept.current;
    if (
      kept &&
      !kept.element.isConnected &&
      (document.activeElement === null || document.activeElement === document.body)
    ) {
      focusKept.current = undefined;
      const messages = element.querySelectorAll<HTMLElement>('article.message');
      const message = messages[Math.min(kept.index, messages.length - 1)];
      const buttons = message
        ? [...message.querySelectorAll<HTMLButtonElement>('.siblings button:not(:disabled)')]
        : [];
      const control = buttons.find((button) => button.getAttribute('aria-label') === kept.control) ?? buttons[0];
      (kept.control !== undefined && control ? control : message)?.focus({ preventScroll: true });
    }
  }, [entries, follow]);

  useLayoutEffect(() => {
    if (revealId === undefined || !entries.some((entry) => entry.node.id === revealId)) return;
    const message = list.current?.querySelector<HTMLElement>(`[data-node-id="${revealId}"]`);
    message?.scrollIntoView({ block: 'center' });
    message?.focus({ preventScroll: true });
    follow(false);
    onRevealed();
  }, [revealId, entries, onRevealed, follow]);

  const showBranch = useCallback(
    (nodeId: string) => {
      const index = entries.findIndex((entry) => entry.siblingIds.includes(nodeId));
      const message = list.current?.querySelectorAll<HTMLElement>('article.message')[index];
      if (list.current && message && index !== -1)
        placeKept.current = {
          index,
          nodeId: entries[index]!.node.id,
          offset: message.getBoundingClientRect().top - list.current.getBoundingClientRect().top,
        };
      onShowBranch(nodeId);
    },
    [entries, onShowBranch],
  );

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

  const bubble = (node: MessageNode, siblingIds: readonly string[], siblingIndex: number) => (
    <MessageBubble
      key={node.id}
      node={node}
      outsideModelView={unseen?.unseenIds.has(node.id) ?? false}
      siblingIds={siblingIds}
      siblingIndex={siblingIndex}
      isHead={node.id === headId}
      ownDid={props.ownDid}
      connectionLost={connectionLost && node.status === 'streaming'}
      isFocusStop={node.id === focusStopId}
      onShowBranch={showBranch}
      onEdit={props.onEdit}
      onAnchor={props.onAnchor}
      onRegenerate={props.onRegenerate}
      onContinue={props.onContinue}
      onDelete={deleteMessage}
      onToolApproval={props.onToolApproval}
      report={props.report}
      readOnly={props.readOnly}
    />
  );

  return (
    <div className="message-pane">
      <div
        ref={list}
        className="message-list"
        role="log"
        aria-label="Conversation"
        aria-relevant="additions"
        aria-describedby="message-list-keys"
        onScroll={(event) => {
          const element = event.currentTarget;
          const atEnd = element.scrollHeight - element.scrollTop - element.clientHeight < FOLLOW_MARGIN;
          if (atEnd !== following.current) follow(atEnd);
        }}
        onFocus={(event) => {
          const target = event.target as HTMLElement;
          const message = target.closest<HTMLElement>('article.message');
          const id = message?.dataset.nodeId;
          if (id !== undefined) setFocusedId(id);
          focusKept.current = message
            ? {
                element: target,
                index: [...(list.current?.querySelectorAll('article.message') ?? [])].indexOf(message),
                control: target.closest('.siblings') ? (target.getAttribute('aria-label') ?? undefined) : undefined,
              }
            : undefined;
        }}
        onKeyDown={(event) => {
          if (list.current && moveFocus(list.current, event.target as HTMLElement, event.key)) event.preventDefault();
        }}
      >
        <p id="message-list-keys" className="visually-hidden">
          Up and down arrows move between messages; left and right arrows reach a message&apos;s actions.
        </p>
        {entries.length === 0 && empty}
        {entries.map(({ node, siblingIds, siblingIndex, sideBySide }) => [
          node.id === unseen?.resumesAtId && (
            <div key={`${node.id}-context-rule`} className="context-rule" role="note">
              <p>
                The model did not see above this line, except the first message: {unseen.unseenIds.size} messages were
                left out of its latest answer to fit its context window.
              </p>
              {unseen.summary !== undefined && (
                <details className="context-summary">
                  <summary>It read a summary of them instead</summary>
                  <p>{unseen.summary}</p>
                </details>
              )}
            </div>
          ),
          sideBySide.length > 1 ? (
            // Answers of several models to one prompt: side by side, the one the branch goes on from among them.
            <ul
              key={node.id}
              className="side-by-side"
              aria-label={`${sideBySide.length} answers side by side`}
              style={{ '--answers': sideBySide.length } as CSSProperties}
            >
              {sideBySide.map((answer) => (
                <li key={answer.id}>
                  {answer.id === node.id ? (
                    bubble(node, siblingIds, siblingIndex)
                  ) : (
                    <SideAnswer
                      node={answer}
                      connectionLost={connectionLost && answer.status === 'streaming'}
                      onPick={props.readOnly ? undefined : onShowBranch}
                      report={props.report}
                    />
                  )}
                </li>
              ))}
            </ul>
          ) : (
            bubble(node, siblingIds, siblingIndex)
          ),
        ])}
        {pending.map(({ id, text }) => (
          // Not a message of the tree yet (no node, no actions, not a stop of the arrow keys): said as unsent.
          <div key={id} className="message message-user pending-message">
            <span className="visually-hidden">You, not sent yet: </span>
            {text.trim() !== '' && <p className="user-text">{text}</p>}
            <p className="message-note">⏳ Not sent yet: it goes out once the connection is back.</p>
          </div>
        ))}
      </div>
      {awayFromLatest && entries.length > 0 && (
        <button
          type="button"
          className="jump-latest"
          onClick={() => {
            follow(true);
            scrollToLatest();
          }}
        >
          ↓ Latest
        </button>
      )}
    </div>
  );
}
