import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type ReactNode, type RefObject } from 'react';

/**
 * A question asked in place, before something that cannot be undone or to pick how to do it (an export's format):
 * where the person looked, in the page's own look, with the focus kept inside the app (window.confirm blocks the
 * whole page, streaming included, and looks like the browser's). While `asking`, the question shows instead of the
 * buttons that led to it.
 */
export interface Confirmation {
  asking: boolean;
  /** For the button that asks: it has the focus back once the question is cancelled. */
  trigger: RefObject<HTMLButtonElement | null>;
  ask(): void;
  /**
   * The question goes, and the focus goes back to the button that asked it: after a no, or an answer that leaves the
   * thing asked about in place (an export).
   */
  close(): void;
  /** Yes, to removing the thing asked about: the question goes; what was removed decides where the focus goes. */
  answered(): void;
}

export function useConfirmation(): Confirmation {
  const [asking, setAsking] = useState(false);
  const trigger = useRef<HTMLButtonElement>(null);
  // The button that asked is rendered again only once the question has gone: the focus can go back to it after that.
  const refocusTrigger = useRef(false);
  useEffect(() => {
    if (asking || !refocusTrigger.current) return;
    refocusTrigger.current = false;
    trigger.current?.focus();
  }, [asking]);
  const ask = useCallback(() => setAsking(true), []);
  const close = useCallback(() => {
    refocusTrigger.current = true;
    setAsking(false);
  }, []);
  const answered = useCallback(() => setAsking(false), []);
  return { asking, trigger, ask, close, answered };
}

interface InlineQuestionProps {
  confirmation: Confirmation;
  /** The group's name for assistive technology, e.g. "Confirm deletion". */
  label: string;
  className?: string;
  /** The question's buttons, the first the one the focus starts on; one of them says no (`confirmation.close`). */
  children: ReactNode;
}

/** The question of a `Confirmation`, whatever it asks: the focus starts on its first button, Esc says no. */
export function InlineQuestion({ confirmation, label, className, children }: InlineQuestionProps) {
  const group = useRef<HTMLSpanElement>(null);
  useEffect(() => group.current?.querySelector('button')?.focus(), []);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    // Esc answers this question only: further up it would also close the phone's panel, stop the streaming answer
    // or move back to the message.
    event.stopPropagation();
    confirmation.close();
  };
  return (
    // biome-ignore lint/a11y/useSemanticElements: two buttons inside a line of text; a fieldset would be a block of a form
    <span ref={group} className={className} role="group" aria-label={label} onKeyDown={onKeyDown}>
      {children}
    </span>
  );
}

interface InlineConfirmProps {
  confirmation: Confirmation;
  label: string;
  question: string;
  /** The text of the button that does it, e.g. "Delete". */
  action: string;
  onConfirm(): void;
  className?: string;
}

/** A yes-or-no question before something that cannot be undone: the focus starts on its action. */
export function InlineConfirm({ confirmation, label, question, action, onConfirm, className }: InlineConfirmProps) {
  return (
    <InlineQuestion
      confirmation={confirmation}
      label={label}
      className={`inline-confirm${className ? ` ${className}` : ''}`}
    >
      <span className="inline-confirm-question">{question}</span>
      <button
        type="button"
        className="danger"
        onClick={() => {
          confirmation.answered();
          onConfirm();
        }}
      >
        {action}
      </button>
      <button type="button" className="quiet" onClick={confirmation.close}>
        Cancel
      </button>
    </InlineQuestion>
  );
}
