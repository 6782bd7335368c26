import type { ThreadSummary } from '@promethea/cpp-protocol';
import { useNow } from '../hooks/use-now.js';
import { relativeTime } from '../lib/relative-time.js';

interface ThreadListProps {
  threads: ThreadSummary[] | undefined;
  activeThreadId: string | undefined;
  onSelect(threadId: string): void;
  onNew(): void;
}

const UNTITLED = 'New conversation';

export function ThreadList({ threads, activeThreadId, onSelect, onNew }: ThreadListProps) {
  const now = useNow(30_000);
  return (
    <nav className="thread-list" aria-label="Threads">
      <button type="button" className="primary new-thread" onClick={onNew}>
        + New thread
      </button>
      {threads === undefined ? (
        <p className="muted">Loading threads…</p>
      ) : (
        <ul>
          {threads.map((thread) => (
            <li key={thread.threadId}>
              <button
                type="button"
                className="thread"
                aria-current={thread.threadId === activeThreadId ? 'page' : undefined}
                onClick={() => onSelect(thread.threadId)}
              >
                <span className="thread-title">{thread.title || UNTITLED}</span>
                <span className="thread-meta">
                  <time dateTime={new Date(thread.updatedAt).toISOString()} title={new Date(thread.updatedAt).toLocaleString()}>
                    {relativeTime(thread.updatedAt, now)}
                  </time>
                  {' · '}
                  {thread.nodeCount} {thread.nodeCount === 1 ? 'message' : 'messages'}
                </span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </nav>
  );
}
