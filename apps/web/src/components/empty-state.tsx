/** Prompts that show what the chat can do: rich answers to read, and an answer long enough to pivot. */
export const EXAMPLE_PROMPTS = [
  'Explain how a conversation can branch like a tree',
  'Write a TypeScript function that debounces another',
  'Compare WebSockets, SSE and long polling in a table',
] as const;

/** A new thread: what the chat is, and a few prompts to start from. */
export function EmptyState({ onPick }: { onPick(prompt: string): void }) {
  return (
    <div className="empty">
      <h2>Ask anything</h2>
      <p>
        While the answer streams, keep typing: sending then <strong>pivots</strong> — the answer stops where you are,
        and the conversation branches from there. <strong>Anchor</strong> any answer to branch from it.
      </p>
      <ul className="examples" aria-label="Example prompts">
        {EXAMPLE_PROMPTS.map((prompt) => (
          <li key={prompt}>
            <button type="button" className="example" onClick={() => onPick(prompt)}>
              {prompt}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
