/** The longest search query accepted, in UTF-16 code units. */
export const SEARCH_QUERY_MAX_LENGTH = 500;

/** The most terms of a query that count: the rest are ignored, so that no query costs a store more than this. */
export const SEARCH_TERMS_MAX = 8;

/** The most hits one search returns, and how many when the client does not say. */
export const SEARCH_RESULTS_MAX = 50;
export const SEARCH_RESULTS_DEFAULT = 20;

/** Of each message, this many UTF-16 code units from its start are searched: an index stays bounded per message. */
export const SEARCHED_TEXT_LENGTH = 100_000;

/** A word, as search compares them: a run of letters and digits. */
export const SEARCH_WORD_PATTERN = /[\p{L}\p{N}]+/gu;

/**
 * The words of a text as every store compares them: runs of letters and digits, lower-cased. A query's words are
 * its terms; a text matches when each term begins one of its words, so "piv" finds "pivot".
 */
export function searchWords(text: string): string[] {
  return text.toLowerCase().match(SEARCH_WORD_PATTERN) ?? [];
}

/** The terms of a query: its first `SEARCH_TERMS_MAX` distinct words. None: the search finds nothing. */
export function searchTerms(query: string): string[] {
  return [...new Set(searchWords(query))].slice(0, SEARCH_TERMS_MAX);
}
