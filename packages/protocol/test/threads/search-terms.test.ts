import { describe, expect, it } from 'vitest';
import { SEARCH_TERMS_MAX, searchTerms, termWords } from '../../src/threads/search-terms.js';

describe('searchTerms', () => {
  it('takes each word outside quotes, lower-cased, once', () => {
    expect(searchTerms('Pivot  TABLE, pivot!')).toEqual(['pivot', 'table']);
    expect(searchTerms(' !? ')).toEqual([]);
  });

  it('takes the words between a pair of quotes as one phrase, and an unpaired quote to the end', () => {
    expect(searchTerms('"topic 7" rivers')).toEqual(['topic 7', 'rivers']);
    expect(searchTerms('river "Danube, delta')).toEqual(['river', 'danube delta']);
    expect(searchTerms('"alone"')).toEqual(['alone']);
    expect(searchTerms('"" "!?"')).toEqual([]);
  });

  it(`counts ${SEARCH_TERMS_MAX} words in all, a phrase past the limit keeping its first words`, () => {
    expect(searchTerms('a b c d e f "g h i j"')).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g h']);
    expect(termWords(searchTerms('one two three four five six seven eight nine'))).toHaveLength(SEARCH_TERMS_MAX);
  });
});

describe('termWords', () => {
  it("gives a phrase's words one by one", () => {
    expect(termWords(['topic 7', 'rivers'])).toEqual(['topic', '7', 'rivers']);
  });
});
