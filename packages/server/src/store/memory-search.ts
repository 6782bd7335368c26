import { SEARCH_WORD_PATTERN, SEARCHED_TEXT_LENGTH, searchWords, termWords } from '@promethea/cpp-protocol';

/** How much text a snippet shows around the first matching word, in UTF-16 code units, on each side. */
const SNIPPET_BEFORE = 60;
const SNIPPET_AFTER = 120;

/**
 * The memory store's search: a scan of the words of each text, as the SQL stores' indexes compare them. The snippet
 * around the first match of a text that holds every term; undefined when it does not.
 */
export function matchText(text: string, terms: readonly string[]): string | undefined {
  const searched = text.slice(0, SEARCHED_TEXT_LENGTH);
  const words = searchWords(searched);
  if (terms.length === 0 || !terms.every((term) => holds(words, term.split(' ')))) return undefined;
  return snippetAround(searched, termWords(terms));
}

/** Whether some run of `words` begins with `tokens`, one after another: a word, or a phrase's words in order. */
function holds(words: readonly string[], tokens: readonly string[]): boolean {
  return words.some((_, start) => tokens.every((token, offset) => words[start + offset]?.startsWith(token)));
}

function snippetAround(text: string, terms: readonly string[]): string {
  const lower = text.toLowerCase();
  const first = Math.min(...terms.map((term) => firstWordStart(lower, term)).filter((index) => index >= 0));
  const start = Math.max(0, first - SNIPPET_BEFORE);
  const end = Math.min(text.length, first + SNIPPET_AFTER);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}

/** Where the first word beginning with `term` starts, or -1. */
function firstWordStart(lower: string, term: string): number {
  for (const match of lower.matchAll(SEARCH_WORD_PATTERN)) if (match[0].startsWith(term)) return match.index;
  return -1;
}
