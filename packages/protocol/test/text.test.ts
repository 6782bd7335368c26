import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeCutLength } from '@promethea/cpp-protocol';
import { endsInsidePair } from './support/surrogates.js';

// 'a', then U+1F600 as the pair D83D DE00, then 'b': four UTF-16 code units.
const text = 'a\u{1F600}b';

describe('safeCutLength', () => {
  it('counts UTF-16 code units', () => {
    expect(text.length).toBe(4);
    expect(safeCutLength(text, 4)).toBe(4);
    expect(safeCutLength(text, 3)).toBe(3);
    expect(safeCutLength(text, 1)).toBe(1);
    expect(safeCutLength(text, 0)).toBe(0);
  });

  it('moves back one unit instead of splitting a surrogate pair', () => {
    expect(safeCutLength(text, 2)).toBe(1);
    expect(safeCutLength('\u{1F600}', 1)).toBe(0);
    expect(safeCutLength('\u{1F600}\u{1F600}', 3)).toBe(2);
  });

  it('clamps to the text and floors fractions', () => {
    expect(safeCutLength(text, 99)).toBe(4);
    expect(safeCutLength(text, -5)).toBe(0);
    expect(safeCutLength(text, 3.9)).toBe(3);
    expect(safeCutLength(text, 2.5)).toBe(1);
    expect(safeCutLength('', 3)).toBe(0);
  });

  it('never splits a pair and moves back at most one unit', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 30 }), fc.integer({ min: -2, max: 70 }), (value, length) => {
        const wanted = Math.max(0, Math.min(length, value.length));
        const cut = safeCutLength(value, length);
        expect(endsInsidePair(value, cut)).toBe(false);
        expect(cut === wanted || (cut === wanted - 1 && endsInsidePair(value, wanted))).toBe(true);
      }),
    );
  });
});
