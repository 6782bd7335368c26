import {
  ATTACHMENT_MEDIA_TYPES,
  MODELS_PER_PROMPT_MAX,
  type MessageNode,
  type ModelInfo,
} from '@promethea/cpp-protocol';
import {
  useEffect,
  useId,
  useLayoutEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type FormEvent,
  type KeyboardEvent,
  type RefObject,
} from 'react';
import type { AttachmentDraft, AttachmentDrafts } from '../hooks/use-attachment-drafts.js';
import { promptTooLong } from '../lib/describe-error.js';
import { AttachmentTray } from './attachment-tray.js';
import { Icon } from './icons.js';

/** What sending does now: a plain prompt, a pivot of the answer on screen, or a stop of an answer elsewhere first. */
export type SendMode = 'prompt' | 'pivot' | 'stop-then-prompt';

interface ComposerProps {
  mode: SendMode;
  /** Why sending is not possible (the connection is closed for good), if it is not. */
  blockedBy: string | undefined;
  /** What the person should know before sending (that it will wait for the connection). */
  notice: string | undefined;
  /** Set when the head was anchored on a message that already has replies: the next prompt opens a new branch. */
  branchFrom: MessageNode | undefined;
  /** Set when the head is a prompt without its answer: the next prompt goes beside it, as another version. */
  besidePrompt: MessageNode | undefined;
  /** An answer is streaming somewhere in the thread: Stop (and Esc) can end it. */
  streaming: boolean;
  /** Characters of the streaming answer on screen, which a pivot keeps. */
  shownLength: number;
  /** Characters of its reasoning on screen: what a pivot keeps of an answer still thinking. */
  shownReasoningLength: number;
  /** Sends the prompt with its files; resolves `false` if it was refused, so the text and files come back. */
  onSend(text: string, files: readonly AttachmentDraft[]): Promise<boolean>;
  /** The files the next message carries (picked, pasted, or dropped on the chat). */
  files: AttachmentDrafts;
  onStop(): void;
  onReturnToLatest(): void;
  /** The message box, for the conversation to give it the focus back. */
  inputRef: RefObject<HTMLTextAreaElement | null>;
  /** The models the server offers: a picker shows when there are several. */
  models: ModelInfo[];
  /** The id of the model the next message goes to. */
  model: string | undefined;
  onModelChange(model: string): void;
  /** The text in the box changed (typed, sent, cleared): other members see who types. */
  onTextChange?(text: string): void;
  /** The models that answer the next message beside `model`, side by side (PROTOCOL.md §30). */
  compared: readonly string[];
  onComparedChange(compared: string[]): void;
}

/** The reference server's prompt limit (its `maxPromptLength` default), in UTF-16 code units as it counts them. */
export const PROMPT_LIMIT = 100_000;
/** The counter shows from this share of the limit on, when the length starts to matter. */
const COUNTER_FROM = 0.8;
/**
 * What the file picker offers: the types the server takes (PROTOCOL.md §27.3), text by its usual extensions too, since
 * a browser gives source code and Markdown no `text/*` type of its own. The server still decides from the bytes.
 */
const PICKER_ACCEPT = [
  ...ATTACHMENT_MEDIA_TYPES,
  'text/*',
  '.md,.csv,.json,.txt,.ts,.tsx,.js,.py,.java,.c,.h,.cpp,.rs,.go,.rb,.sh,.yaml,.yml,.toml,.xml,.html,.css,.sql',
].join(',');

/** The key that focuses the message box from anywhere on the page, as in many web apps. */
const FOCUS_KEY = '/';

const SEND_LABEL: Record<SendMode, string> = { prompt: 'Send', pivot: 'Pivot', 'stop-then-prompt': 'Stop & send' };

export function Composer(props: ComposerProps) {
  const {
    mode,
    blockedBy,
    notice,
    branchFrom,
    besidePrompt,
    streaming,
    shownLength,
    shownReasoningLength,
    onSend,
    onStop,
    onReturnToLatest,
    inputRef: input,
    models,
    model,
    files,
  } = props;
  const [text, setText] = useState('');
  const { onTextChange } = props;
  useEffect(() => onTextChange?.(text), [text, onTextChange]);
  const inputId = useId();
  const hintId = useId();
  const picker = useRef<HTMLInputElement>(null);
  const tooLong = text.length > PROMPT_LIMIT;
  // A message of files alone may go with no words, as a pasted screenshot does in every chat app (PROTOCOL.md §6.5).
  const saysSomething = text.trim() !== '' || files.drafts.length > 0;
  const canSend = blockedBy === undefined && saysSomething && !tooLong && !files.uploading;

  // The message box is where a chat starts: focused when the conversation opens, and by "/" from anywhere else. As a
  // layout effect, the opening's focus comes before any other component's effects of the same render, so that one
  // that moves the focus on purpose as the conversation opens (the thread list after a deletion) has the last word.
  useLayoutEffect(() => input.current?.focus(), [input]);
  useEffect(() => {
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key !== FOCUS_KEY || event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
      const target = event.target as HTMLElement;
      if (target.closest('input, textarea, select, [contenteditable="true"]')) return;
      event.preventDefault();
      input.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [input]);

  // Esc stops the answer from anywhere on the page, unless something closer to the focus used the key already.
  useEffect(() => {
    if (!streaming) return;
    const onKey = (event: globalThis.KeyboardEvent) => {
      if (event.key === 'Escape' && !event.defaultPrevented) onStop();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [streaming, onStop]);

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    if (!canSend) return;
    const prompt = text;
    const sent = files.take();
    setText('');
    input.current?.focus();
    const accepted = await onSend(prompt.trim(), sent);
    if (accepted) return files.release(sent);
    setText((current) => (current === '' ? prompt : current));
    files.restore(sent);
  };

  // A screenshot or a file copied elsewhere is attached; pasted text stays the browser's to paste.
  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const pasted = [...event.clipboardData.files];
    if (pasted.length === 0) return;
    event.preventDefault();
    files.add(pasted);
  };

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) void send(event);
  };

  return (
    <form className={`composer composer-${mode}`} onSubmit={send} aria-label="Message composer">
      {besidePrompt && (
        <p className="composer-note branch-note">
          <span>
            ✎ Your next message goes beside <q className="excerpt">{excerpt(besidePrompt.content)}</q>, as another
            version of it
          </span>
        </p>
      )}
      {branchFrom && (
        <p className="composer-note branch-note">
          <span>
            ⚓ Your next message branches from <q className="excerpt">{excerpt(branchFrom.content)}</q>
          </span>
          <button type="button" className="quiet" onClick={onReturnToLatest}>
            Back to latest
          </button>
        </p>
      )}
      {/* Said while the person types, when it matters: not on every answer that streams. */}
      {mode === 'pivot' && text !== '' && (
        <p className="composer-note pivot-note">
          {shownLength === 0 && shownReasoningLength > 0
            ? `Sending now pivots: the model stops thinking here, at the ${shownReasoningLength} characters of reasoning on screen, and your message branches from it.`
            : `Sending now pivots: the answer stops here, at the ${shownLength} characters on screen, and your message branches from it.`}
        </p>
      )}
      {mode === 'stop-then-prompt' && text !== '' && (
        <p className="composer-note pivot-note">An answer is streaming on another branch: sending stops it first.</p>
      )}
      <AttachmentTray
        drafts={files.drafts}
        onRemove={(key) => {
          files.remove(key);
          input.current?.focus();
        }}
      />
      <label htmlFor={inputId} className="visually-hidden">
        Message
      </label>
      <div className="composer-row">
        <textarea
          ref={input}
          id={inputId}
          value={text}
          rows={2}
          placeholder={mode === 'pivot' ? 'Change direction…' : 'Message…'}
          aria-describedby={hintId}
          aria-keyshortcuts={FOCUS_KEY}
          aria-invalid={tooLong || undefined}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
        />
        <div className="composer-actions">
          {streaming && (
            <button type="button" className="stop" onClick={onStop} aria-keyshortcuts="Escape">
              ■ Stop
            </button>
          )}
          <button type="submit" className="primary send" disabled={!canSend}>
            {SEND_LABEL[mode]}
          </button>
        </div>
      </div>
      {/* Below the box rather than beside it: on a phone the box keeps the width of the screen. */}
      <div className="composer-footer">
        <button
          type="button"
          className="quiet attach"
          title="Attach images, PDFs or text files (or paste them, or drop them on the chat)"
          disabled={blockedBy !== undefined}
          onClick={() => picker.current?.click()}
        >
          <Icon name="attach" />
          <span>Attach</span>
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          hidden
          accept={PICKER_ACCEPT}
          onChange={(event) => {
            files.add([...(event.target.files ?? [])]);
            // The same file may be picked again after it was removed.
            event.target.value = '';
            input.current?.focus();
          }}
        />
        {models.length > 1 && (
          <select
            className="model-picker"
            aria-label="Model"
            title="The model that answers your next message"
            value={model}
            onChange={(event) => props.onModelChange(event.target.value)}
          >
            {models.map((offered) => (
              <option key={offered.id} value={offered.id}>
                {offered.label}
              </option>
            ))}
          </select>
        )}
        {models.length > 1 && (
          <CompareModels
            models={models.filter((offered) => offered.id !== model)}
            compared={props.compared}
            onChange={props.onComparedChange}
          />
        )}
        <p
          id={hintId}
          className={`composer-hint muted${blockedBy || notice || tooLong ? ' composer-hint-important' : ''}`}
        >
          <span className="composer-hint-text">
            {tooLong
              ? `${promptTooLong(text.length, PROMPT_LIMIT)} Shorten it to send.`
              : (blockedBy ??
                notice ??
                (files.uploading ? 'Uploading the files: the message can go once they are up.' : undefined) ??
                `Enter sends, Shift+Enter starts a new line${streaming ? ', Esc stops the answer' : ''}; / comes back here.`)}
          </span>
          {text.length >= PROMPT_LIMIT * COUNTER_FROM && (
            <span className={`length-counter${tooLong ? ' over' : ''}`}>
              {text.length.toLocaleString('en')} / {PROMPT_LIMIT.toLocaleString('en')}
            </span>
          )}
        </p>
      </div>
    </form>
  );
}

/**
 * The models that answer beside the one picked, each in an answer of its own, side by side: up to three more, the
 * protocol's four in all.
 */
function CompareModels(props: {
  models: ModelInfo[];
  compared: readonly string[];
  onChange(compared: string[]): void;
}) {
  const { models, onChange } = props;
  const compared = props.compared.filter((id) => models.some((offered) => offered.id === id));
  const full = compared.length >= MODELS_PER_PROMPT_MAX - 1;
  return (
    <details
      className="model-compare"
      // Closed once the focus leaves it, so that the list does not stay over the message box.
      onBlur={(event) => {
        if (!event.currentTarget.contains(event.relatedTarget as Node | null)) event.currentTarget.open = false;
      }}
    >
      <summary title="Ask other models the same question and read their answers side by side">
        Compare{compared.length > 0 ? ` (+${compared.length})` : ''}
      </summary>
      <fieldset>
        <legend>Also answered by</legend>
        {models.map((offered) => {
          const checked = compared.includes(offered.id);
          return (
            <label key={offered.id}>
              <input
                type="checkbox"
                checked={checked}
                disabled={!checked && full}
                onChange={() =>
                  onChange(checked ? compared.filter((id) => id !== offered.id) : [...compared, offered.id])
                }
              />
              {offered.label}
            </label>
          );
        })}
      </fieldset>
    </details>
  );
}

function excerpt(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
