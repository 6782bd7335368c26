import type { ShownError } from '../lib/describe-error.js';

interface ErrorListProps {
  errors: ShownError[];
  onDismiss(id: number): void;
}

/** Every failure stays on screen until the person dismisses it. */
export function ErrorList({ errors, onDismiss }: ErrorListProps) {
  return (
    <div className="errors" role="alert" aria-live="assertive">
      {errors.map((error) => (
        <p key={error.id} className="error">
          {error.code && <strong className="error-code">{error.code}</strong>}
          <span className="error-message">{error.message}</span>
          <button type="button" className="quiet" onClick={() => onDismiss(error.id)} aria-label="Dismiss this error">
            ✕
          </button>
        </p>
      ))}
    </div>
  );
}
