import type { SearchHit, ThreadSummary } from '@promethea/cpp-protocol';
import { useState, type FormEvent } from 'react';
import { useNow } from '../hooks/use-now.js';
import { relativeTime } from '../lib/relative-time.js';

interface ThreadListProps {
  threads: ThreadSummary[] | undefined;
  activeThreadId: string | undefined;
  onSelect(threadId: string): void;
  onNew(): void;
  onRename(threadId: string, title: string): void;
  onDelete(threadId: string): void;
  query: string;
  onQueryChange(query: string): void;
  /** The hits of `query`; `undefined` while there are none to show yet. */
  hits: SearchHit[] | undefined;
  onOpenHit(hit: SearchHit): void;
}

const UNTITLED = 'New conversation';

export function ThreadList(props: ThreadListProps) {
  const { threads, query, onQueryChange, hits, onNew } = props;
  return (
    <nav className="thread-list" aria-label="Threads">
      <button type="button" className="primary new-thread" onClick={onNew}>
        + New thread
      </button>
      <input type="search" className="thread-search" aria-label="Search threads" placeholder="Search" value={query} onChange={(event) => onQueryChange(event.target.value)} />
      {query.trim() !== '' ? (
        <SearchHits hits={hits} onOpen={props.onOpenHit} />
      ) : threads === undefined ? (
        <p className="muted">Loading threads…</p>
      ) : (
        <ul>
          {threads.map((thread) => (
            <ThreadItem key={thread.threadId} thread={thread} {...props} />
          ))}
        </ul>
      )}
    </nav>
  );
}

function SearchHits({ hits, onOpen }: { hits: SearchHit[] | undefined; onOpen(hit: SearchHit): void }) {
  if (hits === undefined) return <p className="muted">Searching…</p>;
  if (hits.length === 0) return <p className="muted">Nothing found.</p>;
  return (
    <ul aria-label="Search results">
      {hits.map((hit) => (
        <li key={`${hit.threadId} ${hit.nodeId}`}>
          <button type="button" className="thread search-hit" onClick={() => onOpen(hit)}>
            <span className="thread-title">{hit.title || UNTITLED}</span>
            {hit.nodeId !== null && <span className="thread-meta">{hit.snippet}</span>}
          </button>
        </li>
      ))}
    </ul>
  );
}

function ThreadItem({ thread, activeThreadId, onSelect, onRename, onDelete }: ThreadListProps & { thread: ThreadSummary }) {
  const now = useNow(30_000);
  const [renaming, setRenaming] = useState(false);
  const active = thread.threadId === activeThreadId;
  const title = thread.title || UNTITLED;

  const rename = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const entered = String(new FormData(event.currentTarget).get('title') ?? '').trim();
    setRenaming(false);
    if (entered !== '' && entered !== thread.title) onRename(thread.threadId, entered);
  };

  if (renaming) {
    return (
      <li>
        <form className="thread rename" onSubmit={rename}>
          <input name="title" aria-label="Thread title" defaultValue={thread.title} maxLength={200} autoFocus onKeyDown={(event) => event.key === 'Escape' && setRenaming(false)} />
          <button type="submit" className="quiet">
            Save
          </button>
        </form>
      </li>
    );
  }
  return (
    <li>
      <button type="button" className="thread" aria-current={active ? 'page' : undefined} onClick={() => onSelect(thread.threadId)}>
        <span className="thread-title">{title}</span>
        <span className="thread-meta">
          <time dateTime={new Date(thread.updatedAt).toISOString()} title={new Date(thread.updatedAt).toLocaleString()}>
            {relativeTime(thread.updatedAt, now)}
          </time>
          {' · '}
          {thread.nodeCount} {thread.nodeCount === 1 ? 'message' : 'messages'}
        </span>
      </button>
      {active && (
        <span className="thread-actions">
          <button type="button" className="quiet" aria-label="Rename thread" onClick={() => setRenaming(true)}>
            Rename
          </button>
          <button type="button" className="quiet" aria-label="Delete thread" onClick={() => window.confirm(`Delete “${title}” and all its messages?`) && onDelete(thread.threadId)}>
            Delete
          </button>
        </span>
      )}
    </li>
  );
}
