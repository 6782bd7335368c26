import type { ShownError } from '../lib/describe-error.js';

interface ErrorListProps {
  errors: ShownError[];
  onDismiss(id: number): void;
}

/** Every failure stays on screen, in words, until the person dismisses it; the protocol's code is on hover. */
export function ErrorList({ errors, onDismiss }: ErrorListProps) {
  return (
    <div className="errors" role="alert" aria-live="assertive">
      {errors.map((error) => (
        <p key={error.id} className="error" data-code={error.code} title={error.code && `Error code ${error.code}`}>
          <span className="error-message">{error.message}</span>
          <button type="button" className="quiet" onClick={() => onDismiss(error.id)} aria-label="Dismiss this error">
            ✕
          </button>
        </p>
      ))}
    </div>
  );
}
