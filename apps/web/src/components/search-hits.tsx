import { termWords, type SearchHit } from '@promethea/cpp-protocol';
import { markTerms } from '../lib/thread-groups.js';

interface SearchHitsProps {
  hits: SearchHit[] | undefined;
  terms: string[];
  onOpen(hit: SearchHit): void;
}

const UNTITLED = 'New conversation';

/** The hits of each thread together, threads in the order of their best hit: a title once, then what matched in it. */
function byThread(hits: readonly SearchHit[]): SearchHit[][] {
  const groups = new Map<string, SearchHit[]>();
  for (const hit of hits) {
    const group = groups.get(hit.threadId);
    if (group) group.push(hit);
    else groups.set(hit.threadId, [hit]);
  }
  return [...groups.values()];
}

/** Search results, one row per thread: its title opens its best hit, and each matching message opens at itself. */
export function SearchHits({ hits, terms, onOpen }: SearchHitsProps) {
  const marked = termWords(terms);
  if (hits === undefined) return <p className="muted">Searching…</p>;
  if (hits.length === 0) return <p className="muted">Nothing found.</p>;
  return (
    <ul aria-label="Search results">
      {byThread(hits).map((group) => {
        const [best] = group as [SearchHit, ...SearchHit[]];
        const messages = group.filter((hit) => hit.nodeId !== null);
        return (
          <li key={best.threadId} className="search-thread">
            <button type="button" className="thread search-hit" onClick={() => onOpen(best)}>
              <span className="thread-title">{best.title || UNTITLED}</span>
              <span className="thread-meta">
                {messages.length === 0
                  ? 'title matches'
                  : `${messages.length} matching ${messages.length === 1 ? 'message' : 'messages'}`}
              </span>
            </button>
            {messages.length > 0 && (
              <ul className="search-snippets">
                {messages.map((hit) => (
                  <li key={hit.nodeId}>
                    <button type="button" className="search-snippet snippet" onClick={() => onOpen(hit)}>
                      {markTerms(hit.snippet, marked).map((piece, index) =>
                        // biome-ignore lint/suspicious/noArrayIndexKey: the pieces of one snippet never reorder.
                        piece.marked ? <mark key={index}>{piece.text}</mark> : piece.text,
                      )}
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </li>
        );
      })}
    </ul>
  );
}
