import type { MessageNode } from '@promethea/cpp-protocol';
import type { Ref } from 'react';
import { useCopy } from '../hooks/use-copy.js';
import { Icon, type IconName } from './icons.js';
import { InlineConfirm, useConfirmation } from './inline-confirm.js';

export interface MessageActionHandlers {
  onAnchor(nodeId: string): void;
  onRegenerate(nodeId: string): void;
  onContinue(nodeId: string): void;
  onDelete(nodeId: string): void;
  /** Approves or denies a tool call of the answer `nodeId` that waits for approval. */
  onToolApproval(nodeId: string, toolCallId: string, approved: boolean): void;
  report(error: unknown): void;
  /** A reader's view of a shared thread: nothing that changes the tree is offered (the server refuses it). */
  readOnly?: boolean;
}

interface MessageActionsProps extends MessageActionHandlers {
  node: MessageNode;
  /** The node's versions, itself included: a first prompt may be deleted only while it has another. */
  siblingIds: readonly string[];
  isHead: boolean;
  onEdit(): void;
}

/**
 * One toolbar per message, shown on hover and focus. Its buttons are not tab stops: the message list moves the
 * focus into them with the arrow keys, so a long chat is one stop on the way to the composer, not hundreds.
 */
export function MessageActions({
  node,
  siblingIds,
  isHead,
  onEdit,
  onAnchor,
  onRegenerate,
  onContinue,
  onDelete,
  report,
  readOnly = false,
}: MessageActionsProps) {
  const { copied, copy } = useCopy(report);
  const deletion = useConfirmation();
  const answer = node.role === 'assistant';
  const writes = !readOnly;
  // Only a cut answer with nothing under it can go on (PROTOCOL.md §24.4): one with a branch under it would change
  // what that branch answered.
  const canContinue = (node.status === 'interrupted' || node.status === 'failed') && node.childrenIds.length === 0;
  if (deletion.asking)
    return (
      <InlineConfirm
        confirmation={deletion}
        className="message-confirm"
        label="Confirm deletion"
        question="Delete this message and everything under it?"
        action="Delete"
        onConfirm={() => onDelete(node.id)}
      />
    );
  return (
    <div className="message-actions" role="toolbar" aria-label="Message actions">
      <Action
        icon={copied ? 'check' : 'copy'}
        label={copied ? 'Copied' : 'Copy'}
        title="Copy the text of this message"
        onClick={() => copy(node.content)}
      />
      {writes && !answer && (
        <Action
          icon="edit"
          label="Edit"
          title="Ask this differently: the new text goes beside this one, which is kept"
          onClick={onEdit}
        />
      )}
      {writes && answer && (
        <Action
          icon="regenerate"
          label="Regenerate"
          title="Write this answer again, beside this one"
          onClick={() => onRegenerate(node.id)}
        />
      )}
      {writes && answer && canContinue && (
        <Action
          icon="continue"
          label="Continue"
          title="Let the model go on from where this answer stops"
          onClick={() => onContinue(node.id)}
        />
      )}
      {/* Anchor is for answers: going on from a prompt is asking it again, which is Edit. */}
      {writes && answer && (
        <Action
          icon="anchor"
          label="Anchor"
          pressed={isHead}
          title={isHead ? 'The next prompt continues from this answer' : 'Branch the next prompt from this answer'}
          onClick={() => onAnchor(node.id)}
        />
      )}
      {writes && (node.parentId !== null || siblingIds.length > 1) && (
        <Action
          icon="delete"
          label="Delete"
          title="Delete this message and everything under it"
          ref={deletion.trigger}
          onClick={deletion.ask}
        />
      )}
      <span className="visually-hidden" role="status">
        {copied ? 'Copied' : ''}
      </span>
    </div>
  );
}

interface ActionProps {
  icon: IconName;
  label: string;
  title: string;
  pressed?: boolean;
  ref?: Ref<HTMLButtonElement>;
  onClick(): void;
}

function Action({ icon, label, title, pressed, ref, onClick }: ActionProps) {
  return (
    <button
      type="button"
      ref={ref}
      className={`quiet action action-${icon}`}
      tabIndex={-1}
      aria-pressed={pressed}
      title={title}
      onClick={onClick}
    >
      <Icon name={icon} />
      <span className="action-label">{label}</span>
    </button>
  );
}
