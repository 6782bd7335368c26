import type { MessageNode } from '@promethea/cpp-protocol';
import { memo, useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from 'react';
import { Markdown } from './markdown.js';
import { MessageAttachments } from './message-attachments.js';
import { MessageActions, type MessageActionHandlers } from './message-actions.js';
import { Reasoning } from './reasoning.js';
import { SiblingSwitcher } from './sibling-switcher.js';
import { memberName } from '../lib/member-name.js';
import { ToolCalls } from './tool-calls.js';

interface MessageBubbleProps extends MessageActionHandlers {
  node: MessageNode;
  siblingIds: readonly string[];
  siblingIndex: number;
  isHead: boolean;
  /** This browser's DID, once known: a prompt of another member of a shared thread names its author. */
  ownDid: string | undefined;
  /** The connection went while this answer streamed: what arrived is all there is here until it is back. */
  connectionLost: boolean;
  /** The one message of the list that is a tab stop (roving focus). */
  isFocusStop: boolean;
  /** The latest answer's model did not read this message, to fit its context window: it is shown dimmed. */
  outsideModelView: boolean;
  onShowBranch(nodeId: string): void;
  onEdit(nodeId: string, userPrompt: string): void;
}

const AUTHOR = { user: 'You', assistant: 'Assistant' } as const;

/** Who wrote a message: "You", the assistant, or another member of a shared thread, by the end of its DID. */
function authorOf(node: MessageNode, ownDid: string | undefined): string {
  if (node.role === 'assistant' || node.authorDid === undefined || node.authorDid === ownDid) return AUTHOR[node.role];
  return memberName(node.authorDid);
}

export const MessageBubble = memo(function MessageBubble(props: MessageBubbleProps) {
  const {
    node,
    siblingIds,
    siblingIndex,
    isHead,
    ownDid,
    connectionLost,
    isFocusStop,
    outsideModelView,
    onShowBranch,
    onEdit,
  } = props;
  const [editing, setEditing] = useState(false);
  const streaming = node.status === 'streaming' && !connectionLost;
  // The edit box goes with the focus in it, after a send or a cancel: the focus goes back to the message.
  const article = useRef<HTMLElement>(null);
  const wasEditing = useRef(false);
  useEffect(() => {
    if (wasEditing.current && !editing && (document.activeElement === null || document.activeElement === document.body))
      article.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  return (
    <article
      ref={article}
      className={`message message-${node.role} status-${connectionLost ? 'connection-lost' : node.status}${isHead ? ' is-head' : ''}${outsideModelView ? ' outside-model-view' : ''}`}
      aria-label={`${authorOf(node, ownDid)}${connectionLost ? ', cut off by the lost connection' : statusLabel(node)}${outsideModelView ? ', not seen by the model' : ''}`}
      aria-busy={streaming}
      data-node-id={node.id}
      data-status={node.status}
      data-length={node.content.length}
      tabIndex={isFocusStop ? 0 : -1}
    >
      <header className="message-header">
        <span className="message-author">
          {authorOf(node, ownDid)}
          {node.role === 'assistant' && node.model && <span className="message-model"> · {node.model}</span>}
        </span>
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
        {!editing && <MessageActions {...props} onEdit={() => setEditing(true)} />}
      </header>
      {node.attachments && node.attachments.length > 0 && <MessageAttachments attachments={node.attachments} />}
      {node.reasoning && <Reasoning text={node.reasoning} thinking={streaming && node.content === ''} />}
      {/* A prompt of files alone (PROTOCOL.md §6.5) shows its files only, no empty text. */}
      {(editing || node.role !== 'user' || node.content.trim() !== '') && (
        <div className="message-body" aria-live={streaming ? 'polite' : undefined} aria-atomic="false">
          {editing ? (
            <EditForm
              text={node.content}
              withFiles={(node.attachments?.length ?? 0) > 0}
              onCancel={() => setEditing(false)}
              onSubmit={(text) => {
                setEditing(false);
                onEdit(node.id, text);
              }}
            />
          ) : node.role === 'user' ? (
            <p className="user-text">{node.content}</p>
          ) : streaming && node.content === '' ? (
            !node.reasoning && <p className="muted typing">Thinking…</p>
          ) : (
            <Markdown text={node.content} report={props.report} />
          )}
        </div>
      )}
      {node.toolCalls && (
        <ToolCalls
          calls={node.toolCalls}
          streaming={streaming}
          onApproval={(toolCallId, approved) => props.onToolApproval(node.id, toolCallId, approved)}
        />
      )}
      {connectionLost ? (
        <p className="message-note connection-lost-note">
          ⚡ The connection is lost: the answer stops here until it is back.
        </p>
      ) : (
        <MessageFooter node={node} />
      )}
    </article>
  );
});

/**
 * An answer of another model to the same prompt, shown beside the one the branch goes on from (PROTOCOL.md §30):
 * its text as it streams and how it ended, and a way to go on from it instead, which anchors the head there.
 */
export const SideAnswer = memo(function SideAnswer(props: {
  node: MessageNode;
  connectionLost: boolean;
  /** Goes on from this answer; absent for a reader, who changes nothing. */
  onPick: ((nodeId: string) => void) | undefined;
  report(error: unknown): void;
}) {
  const { node, connectionLost, onPick } = props;
  const streaming = node.status === 'streaming' && !connectionLost;
  const label = `Answer by ${node.model ?? 'the model'}${connectionLost ? ', cut off by the lost connection' : statusLabel(node)}`;
  return (
    <section
      className={`side-answer status-${connectionLost ? 'connection-lost' : node.status}`}
      aria-label={label}
      aria-busy={streaming}
      data-node-id={node.id}
      data-status={node.status}
    >
      <header className="message-header">
        <span className="message-author">
          Assistant{node.model && <span className="message-model"> · {node.model}</span>}
        </span>
      </header>
      {node.reasoning && <Reasoning text={node.reasoning} thinking={streaming && node.content === ''} />}
      <div className="message-body" aria-live={streaming ? 'polite' : undefined} aria-atomic="false">
        {streaming && node.content === '' ? (
          !node.reasoning && <p className="muted typing">Thinking…</p>
        ) : (
          <Markdown text={node.content} report={props.report} />
        )}
      </div>
      <MessageFooter node={node} />
      {onPick && (
        <button type="button" className="quiet pick-answer" onClick={() => onPick(node.id)}>
          Continue from this answer
        </button>
      )}
    </section>
  );
});

interface EditFormProps {
  text: string;
  /** The prompt carries files, which its edit carries again: its text may then be emptied. */
  withFiles: boolean;
  onSubmit(text: string): void;
  onCancel(): void;
}

/** Edit in place, as chat apps do: the new text is asked beside the old, which stays one ‹ › away. */
function EditForm({ text, withFiles, onSubmit, onCancel }: EditFormProps) {
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const entered = String(new FormData(event.currentTarget).get('prompt') ?? '').trim();
    // Emptied, a prompt of files becomes one of files alone; one of text alone would say nothing, so it is left as is.
    if ((entered === '' && !withFiles) || entered === text) onCancel();
    else onSubmit(entered);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      onCancel();
    } else if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      event.currentTarget.form?.requestSubmit();
    }
  };
  return (
    <form className="edit-form" onSubmit={submit}>
      {/* biome-ignore lint/a11y/noAutofocus: the box appears because the person chose Edit: the typing goes there */}
      <textarea name="prompt" aria-label="Edit message" defaultValue={text} rows={3} autoFocus onKeyDown={onKeyDown} />
      <div className="edit-actions">
        <button type="button" className="quiet" onClick={onCancel}>
          Cancel
        </button>
        <button type="submit" className="primary">
          Send as a new branch
        </button>
      </div>
    </form>
  );
}

function MessageFooter({ node }: { node: MessageNode }) {
  if (node.status === 'interrupted')
    return (
      <p className="message-note cut-note">
        ✂ Interrupted: cut at <span className="cut-length">{node.content.length}</span> characters
      </p>
    );
  if (node.status === 'failed')
    return <p className="message-note failed-note">⚠ The model failed here; the text above is what it wrote.</p>;
  if (node.role === 'assistant' && node.status === 'completed' && node.usage?.outputTokens !== undefined)
    return <p className="message-note muted">{node.usage.outputTokens} tokens</p>;
  return null;
}

function statusLabel(node: MessageNode): string {
  if (node.status === 'streaming') return ', answering';
  if (node.status === 'interrupted') return `, interrupted at ${node.content.length} characters`;
  if (node.status === 'failed') return ', failed';
  return '';
}
