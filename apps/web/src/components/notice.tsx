interface NoticeProps {
  text: string | undefined;
  onDismiss(): void;
}

/** What went right and the person should know (an import done, the connection back), until they dismiss it. */
export function Notice({ text, onDismiss }: NoticeProps) {
  return (
    <div className="notices" role="status">
      {text !== undefined && (
        <p className="notice">
          <span className="notice-text">{text}</span>
          <button type="button" className="quiet" onClick={onDismiss} aria-label="Dismiss this notice">
            ✕
          </button>
        </p>
      )}
    </div>
  );
}
