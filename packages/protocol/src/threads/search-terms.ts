/** The longest search query accepted, in UTF-16 code units. */
export const SEARCH_QUERY_MAX_LENGTH = 500;

/** The most words a query's terms hold together: the rest are ignored, so that no query costs a store more than this. */
export const SEARCH_TERMS_MAX = 8;

/** The most hits one search returns, and how many when the client does not say. */
export const SEARCH_RESULTS_MAX = 50;
export const SEARCH_RESULTS_DEFAULT = 20;

/** Of each message, this many UTF-16 code units from its start are searched: an index stays bounded per message. */
export const SEARCHED_TEXT_LENGTH = 100_000;

/** A word, as search compares them: a run of letters and digits. */
export const SEARCH_WORD_PATTERN = /[\p{L}\p{N}]+/gu;

/**
 * The words of a text as every store compares them: runs of letters and digits, lower-cased. A term's words begin
 * words of a text: "piv" finds "pivot".
 */
export function searchWords(text: string): string[] {
  return text.toLowerCase().match(SEARCH_WORD_PATTERN) ?? [];
}

/**
 * The terms of a query. Outside double quotes each word is a term; the words between a pair of quotes (or after a
 * last, unpaired one) are one term, a phrase, written as its words joined by single spaces: a text matches it only
 * with words beginning with them one after another, in that order ("topic 7" finds "topic 7" and "topic 70", not
 * "turn 7 … topic 4"). Distinct terms in the query's order, `SEARCH_TERMS_MAX` words in all (a phrase past the
 * limit keeps its first words). None: the search finds nothing.
 */
export function searchTerms(query: string): string[] {
  const terms: string[] = [];
  let room = SEARCH_TERMS_MAX;
  const add = (words: string[]) => {
    const term = words.slice(0, room).join(' ');
    if (term === '' || terms.includes(term)) return;
    terms.push(term);
    room -= Math.min(words.length, room);
  };
  query.split('"').forEach((part, index) => {
    const words = searchWords(part);
    if (index % 2 === 1) add(words);
    else for (const word of words) add([word]);
  });
  return terms;
}

/** The words of terms, a phrase's each on its own: what a snippet marks. */
export function termWords(terms: readonly string[]): string[] {
  return terms.flatMap((term) => term.split(' '));
}
