import type { ExportFormat } from '@promethea/cpp-client';
import { searchTerms, type SearchHit, type ThreadSummary } from '@promethea/cpp-protocol';
import { useEffect, useMemo, useRef, useState, type ChangeEvent, type FormEvent } from 'react';
import { useNow } from '../hooks/use-now.js';
import { useRowWindow } from '../hooks/use-row-window.js';
import { relativeTime } from '../lib/relative-time.js';
import { groupThreads, threadAfterDeletion, type ThreadGroup } from '../lib/thread-groups.js';
import { InlineConfirm, InlineQuestion, useConfirmation } from './inline-confirm.js';
import { SearchHits } from './search-hits.js';

interface ThreadListProps {
  threads: readonly ThreadSummary[] | undefined;
  activeThreadId: string | undefined;
  /** The thread whose conversation is on screen (the active one once it has opened). */
  shownThreadId: string | undefined;
  onSelect(threadId: string): void;
  onNew(): void;
  onRename(threadId: string, title: string): void;
  onDelete(threadId: string): void;
  onExport(threadId: string, format: ExportFormat): void;
  /** The text of a file picked to import. */
  onImport(text: string): void;
  query: string;
  onQueryChange(query: string): void;
  /** The hits of `query`; `undefined` while there are none to show yet. */
  hits: SearchHit[] | undefined;
  onOpenHit(hit: SearchHit): void;
  /** The server has older threads than `threads`: `onLoadMore` asks for the next page. */
  hasMore: boolean;
  onLoadMore(): void;
}

const UNTITLED = 'New conversation';

export function ThreadList(props: ThreadListProps) {
  const { threads, shownThreadId, query, onQueryChange, hits, onNew, onImport, onDelete } = props;
  const now = useNow(30_000);
  const list = useRef<HTMLElement>(null);
  const newThread = useRef<HTMLButtonElement>(null);
  // The focus was inside the deleted thread's item, which goes: once the thread has left the list, the focus goes to
  // the thread that took its place (the one the app shows now), or to New thread when none is left. Only once the
  // conversation shown in its place has opened, which focuses its composer as it mounts.
  const [deletion, setDeletion] = useState<{ deletedId: string; nextId: string | undefined }>();
  useEffect(() => {
    if (!deletion || threads?.some((thread) => thread.threadId === deletion.deletedId)) return;
    if (shownThreadId === undefined || shownThreadId === deletion.deletedId) return;
    setDeletion(undefined);
    const next =
      deletion.nextId === undefined
        ? null
        : list.current?.querySelector<HTMLButtonElement>(`[data-thread-id="${CSS.escape(deletion.nextId)}"]`);
    (next ?? newThread.current)?.focus();
  }, [threads, shownThreadId, deletion]);
  const deleteThread = (threadId: string) => {
    setDeletion({ deletedId: threadId, nextId: threadAfterDeletion(threads ?? [], threadId) });
    onDelete(threadId);
  };
  const picker = useRef<HTMLInputElement>(null);
  const picked = (event: ChangeEvent<HTMLInputElement>) => {
    const input = event.currentTarget;
    const file = input.files?.[0];
    // Emptied, so that picking the same file again imports it again.
    input.value = '';
    if (file) void file.text().then(onImport);
  };
  return (
    <nav ref={list} className="thread-list" aria-label="Threads">
      <button type="button" ref={newThread} className="primary new-thread" onClick={onNew}>
        + New thread
      </button>
      <button
        type="button"
        className="quiet import-threads"
        aria-label="Import threads from a file"
        onClick={() => picker.current?.click()}
      >
        Import…
      </button>
      <input
        ref={picker}
        type="file"
        className="visually-hidden"
        accept=".json,application/json"
        tabIndex={-1}
        aria-label="File to import: a CPP JSON export or a ChatGPT conversations.json"
        onChange={picked}
      />
      <input
        type="search"
        className="thread-search"
        aria-label="Search threads"
        placeholder="Search"
        value={query}
        onChange={(event) => onQueryChange(event.target.value)}
      />
      {query.trim() !== '' ? (
        <SearchHits hits={hits} terms={searchTerms(query)} onOpen={props.onOpenHit} />
      ) : threads === undefined ? (
        <p className="muted">Loading threads…</p>
      ) : (
        <ThreadRows {...props} threads={threads} now={now} onDelete={deleteThread} />
      )}
    </nav>
  );
}

/** A group's heading, or one of its threads: the list as drawn, one row after the other. */
type Row = { group: ThreadGroup['label']; thread?: ThreadSummary };

/** Loaded rows still below the view when the next page is asked for: it arrives before the scroll reaches the end. */
const LOAD_AHEAD_ROWS = 20;

/**
 * The threads loaded so far by group, of which only those in view (and a margin) are drawn: with 20,000 threads the
 * DOM holds a few dozen rows, and the next page is asked for as the scroll nears the last one loaded.
 */
function ThreadRows(props: ThreadListProps & { threads: readonly ThreadSummary[]; now: number }) {
  const { threads, now, hasMore, onLoadMore } = props;
  const rows = useMemo(
    () =>
      groupThreads(threads, now).flatMap(({ label, threads: grouped }): Row[] => [
        { group: label },
        ...grouped.map((thread) => ({ group: label, thread })),
      ]),
    [threads, now],
  );
  const [block, setBlock] = useState<HTMLDivElement | null>(null);
  const { start, end, before, after } = useRowWindow(block, rows.length);
  useEffect(() => {
    if (hasMore && end + LOAD_AHEAD_ROWS >= rows.length) onLoadMore();
  }, [hasMore, end, rows.length, onLoadMore]);

  const drawn = rows.slice(start, end);
  const sections = drawn.reduce<Array<{ group: Row['group']; rows: Row[] }>>((grouped, row) => {
    const last = grouped.at(-1);
    if (last?.group === row.group) last.rows.push(row);
    else grouped.push({ group: row.group, rows: [row] });
    return grouped;
  }, []);
  return (
    <div ref={setBlock} className="thread-rows" style={{ paddingTop: before, paddingBottom: after }}>
      {sections.map(({ group, rows: sectionRows }) => {
        const headingId = `thread-group-${group.replace(/\W+/g, '-')}`;
        const heading = sectionRows[0]?.thread === undefined;
        return (
          <section key={group} className="thread-group" aria-label={group}>
            {heading && (
              <h2 id={headingId} className="thread-group-label" data-row>
                {group}
              </h2>
            )}
            <ul>
              {sectionRows.flatMap(({ thread }) =>
                thread ? [<ThreadItem key={thread.threadId} {...props} thread={thread} />] : [],
              )}
            </ul>
          </section>
        );
      })}
    </div>
  );
}

function ThreadItem({
  thread,
  now,
  activeThreadId,
  onSelect,
  onRename,
  onDelete,
  onExport,
}: ThreadListProps & { thread: ThreadSummary; now: number }) {
  const [renaming, setRenaming] = useState(false);
  // Rename, Export and Delete are behind one button of the active thread, not always under it.
  const [menuOpen, setMenuOpen] = useState(false);
  const menuToggle = useRef<HTMLButtonElement>(null);
  const deletion = useConfirmation();
  const exporting = useConfirmation();
  const exportAs = (format: ExportFormat) => {
    exporting.close();
    onExport(thread.threadId, format);
  };
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
      <li data-row>
        <form className="thread rename" onSubmit={rename}>
          <input
            name="title"
            aria-label="Thread title"
            defaultValue={thread.title}
            maxLength={200}
            // biome-ignore lint/a11y/noAutofocus: the field appears because the person chose Rename: the typing goes there
            autoFocus
            onKeyDown={(event) => event.key === 'Escape' && setRenaming(false)}
          />
          <button type="submit" className="quiet">
            Save
          </button>
        </form>
      </li>
    );
  }
  return (
    <li className={active ? 'thread-item-active' : undefined} data-row>
      <button
        type="button"
        className="thread"
        data-thread-id={thread.threadId}
        aria-current={active ? 'page' : undefined}
        onClick={() => onSelect(thread.threadId)}
      >
        <span className="thread-title">{title}</span>
        <span className="visually-hidden">, </span>
        <span className="thread-meta">
          <time dateTime={new Date(thread.updatedAt).toISOString()} title={new Date(thread.updatedAt).toLocaleString()}>
            {relativeTime(thread.updatedAt, now)}
          </time>
          {' · '}
          {thread.nodeCount} {thread.nodeCount === 1 ? 'message' : 'messages'}
        </span>
      </button>
      {active && deletion.asking && (
        <InlineConfirm
          confirmation={deletion}
          className="thread-actions"
          label="Confirm deletion"
          question="Delete it and all its messages?"
          action="Delete"
          onConfirm={() => onDelete(thread.threadId)}
        />
      )}
      {active && exporting.asking && (
        <InlineQuestion confirmation={exporting} className="thread-actions" label="Export thread as">
          <button
            type="button"
            className="quiet"
            aria-label="Export as Markdown (.md)"
            onClick={() => exportAs('markdown')}
          >
            Markdown
          </button>
          <button
            type="button"
            className="quiet"
            aria-label="Export as CPP JSON (.json)"
            onClick={() => exportAs('cpp-thread')}
          >
            JSON
          </button>
          <button type="button" className="quiet" onClick={exporting.close}>
            Cancel
          </button>
        </InlineQuestion>
      )}
      {active && (
        <button
          type="button"
          ref={menuToggle}
          className="quiet thread-menu-toggle"
          aria-label="Thread actions"
          aria-expanded={menuOpen}
          title="Rename, export or delete this thread"
          onClick={() => setMenuOpen((open) => !open)}
        >
          ⋯
        </button>
      )}
      {active && menuOpen && !deletion.asking && !exporting.asking && (
        // biome-ignore lint/a11y/noStaticElementInteractions: Esc closes the menu from any of its buttons.
        <span
          className="thread-actions"
          onKeyDown={(event) => {
            if (event.key !== 'Escape') return;
            // The menu alone closes, not the phone's panel around it.
            event.stopPropagation();
            setMenuOpen(false);
            menuToggle.current?.focus();
          }}
        >
          <button type="button" className="quiet" aria-label="Rename thread" onClick={() => setRenaming(true)}>
            Rename
          </button>
          <button
            type="button"
            ref={exporting.trigger}
            className="quiet"
            aria-label="Export thread"
            onClick={exporting.ask}
          >
            Export
          </button>
          <button
            type="button"
            ref={deletion.trigger}
            className="quiet"
            aria-label="Delete thread"
            onClick={deletion.ask}
          >
            Delete
          </button>
        </span>
      )}
    </li>
  );
}
