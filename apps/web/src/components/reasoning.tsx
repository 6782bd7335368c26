import { useEffect, useRef, useState } from 'react';

interface ReasoningProps {
  text: string;
  /** The model is reasoning now (the answer has not started): the section is open to watch it. */
  thinking: boolean;
}

/** The model's reasoning, apart from its answer: open while it thinks, folded once the answer starts. */
export function Reasoning({ text, thinking }: ReasoningProps) {
  const [open, setOpen] = useState(thinking);
  const wasThinking = useRef(thinking);
  useEffect(() => {
    // Fold it once, when the answer begins; after that the person decides.
    if (wasThinking.current && !thinking) setOpen(false);
    wasThinking.current = thinking;
  }, [thinking]);
  const words = text.split(/\s+/).filter(Boolean).length;
  return (
    <details className="reasoning" open={open} onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>{thinking ? 'Thinking…' : `Thought it through (${words} ${words === 1 ? 'word' : 'words'})`}</summary>
      <p className="reasoning-text">{text}</p>
    </details>
  );
}
