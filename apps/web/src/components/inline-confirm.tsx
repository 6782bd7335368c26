import { useCallback, useEffect, useRef, useState, type KeyboardEvent, type RefObject } from 'react';

/**
 * A question asked in place, before something that cannot be undone: where the person looked, in the page's own
 * look, with the focus kept inside the app (window.confirm blocks the whole page, streaming included, and looks
 * like the browser's). While `asking`, the question shows instead of the buttons that led to it.
 */
export interface Confirmation {
  asking: boolean;
  /** For the button that asks: it has the focus back once the question is cancelled. */
  trigger: RefObject<HTMLButtonElement | null>;
  ask(): void;
  /** No: the question goes, and the focus goes back to the button that asked it. */
  cancel(): void;
  /** Yes: the question goes; what was confirmed decides where the focus goes (the thing asked about may be gone). */
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
  const cancel = useCallback(() => {
    refocusTrigger.current = true;
    setAsking(false);
  }, []);
  const answered = useCallback(() => setAsking(false), []);
  return { asking, trigger, ask, cancel, answered };
}

interface InlineConfirmProps {
  confirmation: Confirmation;
  /** The group's name for assistive technology, e.g. "Confirm deletion". */
  label: string;
  question: string;
  /** The text of the button that does it, e.g. "Delete". */
  action: string;
  onConfirm(): void;
  className?: string;
}

/** The question of a `Confirmation`: the focus starts on its action, Esc or Cancel says no. */
export function InlineConfirm({ confirmation, label, question, action, onConfirm, className }: InlineConfirmProps) {
  const actionButton = useRef<HTMLButtonElement>(null);
  useEffect(() => actionButton.current?.focus(), []);
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== 'Escape') return;
    // Esc answers this question only: further up it would also close the phone's panel, stop the streaming answer
    // or move back to the message.
    event.stopPropagation();
    confirmation.cancel();
  };
  return (
    <span className={`inline-confirm${className ? ` ${className}` : ''}`} role="group" aria-label={label} onKeyDown={onKeyDown}>
      <span className="inline-confirm-question">{question}</span>
      <button
        type="button"
        ref={actionButton}
        className="danger"
        onClick={() => {
          confirmation.answered();
          onConfirm();
        }}
      >
        {action}
      </button>
      <button type="button" className="quiet" onClick={confirmation.cancel}>
        Cancel
      </button>
    </span>
  );
}
