import type { MessageNode } from '@promethea/cpp-protocol';
import { memo } from 'react';
import { Markdown } from './markdown.js';
import { SiblingSwitcher } from './sibling-switcher.js';

interface MessageBubbleProps {
  node: MessageNode;
  siblingIds: readonly string[];
  siblingIndex: number;
  isHead: boolean;
  onAnchor(nodeId: string): void;
  onShowBranch(nodeId: string): void;
  onRegenerate(nodeId: string): void;
  onEdit(node: MessageNode): void;
  onDelete(nodeId: string): void;
}

const AUTHOR = { user: 'You', assistant: 'Assistant' } as const;

export const MessageBubble = memo(function MessageBubble(props: MessageBubbleProps) {
  const { node, siblingIds, siblingIndex, isHead, onAnchor, onShowBranch, onRegenerate, onEdit, onDelete } = props;
  const streaming = node.status === 'streaming';
  return (
    <article
      className={`message message-${node.role} status-${node.status}${isHead ? ' is-head' : ''}`}
      aria-label={`${AUTHOR[node.role]}${statusLabel(node)}`}
      aria-busy={streaming}
      data-node-id={node.id}
      data-status={node.status}
      data-length={node.content.length}
      tabIndex={-1}
    >
      <header className="message-header">
        <span className="message-author">{AUTHOR[node.role]}</span>
        {siblingIds.length > 1 && (
          <SiblingSwitcher
            index={siblingIndex}
            count={siblingIds.length}
            onShow={(offset) => {
              const siblingId = siblingIds[siblingIndex + offset];
              if (siblingId !== undefined) onShowBranch(siblingId);
            }}
          />
        )}
        <button
          type="button"
          className="quiet anchor"
          aria-pressed={isHead}
          title={isHead ? 'The next prompt continues from this message' : 'Branch the next prompt from this message'}
          onClick={() => onAnchor(node.id)}
        >
          ⚓ {isHead ? 'Head' : 'Anchor'}
        </button>
        {node.role === 'assistant' && (
          <button type="button" className="quiet regenerate" title="Write this answer again, beside this one" onClick={() => onRegenerate(node.id)}>
            ↻ Regenerate
          </button>
        )}
        {node.role === 'user' && node.parentId !== null && (
          <button type="button" className="quiet edit" title="Ask this differently, beside this message" onClick={() => onEdit(node)}>
            ✎ Edit
          </button>
        )}
        {node.parentId !== null && (
          <button type="button" className="quiet delete" title="Delete this message and everything under it" onClick={() => onDelete(node.id)}>
            🗑 Delete
          </button>
        )}
      </header>
      <div className="message-body" aria-live={streaming ? 'polite' : undefined} aria-atomic="false">
        {node.role === 'user' ? (
          <p className="user-text">{node.content}</p>
        ) : streaming && node.content === '' ? (
          <p className="muted typing">Thinking…</p>
        ) : (
          <Markdown text={node.content} />
        )}
      </div>
      <MessageFooter node={node} />
    </article>
  );
});

function MessageFooter({ node }: { node: MessageNode }) {
  if (node.status === 'interrupted')
    return (
      <p className="message-note cut-note">
        ✂ Interrupted: cut at <span className="cut-length">{node.content.length}</span> characters
      </p>
    );
  if (node.status === 'failed') return <p className="message-note failed-note">The model failed here; the text above is what it wrote.</p>;
  if (node.role === 'assistant' && node.status === 'completed' && node.model)
    return (
      <p className="message-note muted">
        {node.model}
        {node.usage?.outputTokens !== undefined && ` · ${node.usage.outputTokens} tokens`}
      </p>
    );
  return null;
}

function statusLabel(node: MessageNode): string {
  if (node.status === 'streaming') return ', answering';
  if (node.status === 'interrupted') return `, interrupted at ${node.content.length} characters`;
  if (node.status === 'failed') return ', failed';
  return '';
}
