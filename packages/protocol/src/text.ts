/**
 * Lengths and offsets in CPP count UTF-16 code units, as JavaScript strings do. A cut never splits a surrogate
 * pair: it moves back by one code unit instead.
 */
export function safeCutLength(text: string, length: number): number {
  let cut = Math.max(0, Math.min(Math.floor(length), text.length));
  if (cut > 0 && cut < text.length && isHighSurrogate(text.charCodeAt(cut - 1))) cut -= 1;
  return cut;
}

function isHighSurrogate(codeUnit: number): boolean {
  return codeUnit >= 0xd800 && codeUnit <= 0xdbff;
}

/** Lone surrogates only: with the `u` flag a pair is one code point, which this does not match. */
const LONE_SURROGATE = /\p{Surrogate}/gu;

/**
 * Text as every store holds it (docs/PROTOCOL.md §3.3): U+0000, which PostgreSQL cannot hold, and lone surrogates,
 * which UTF-8 cannot encode (SQLite and PostgreSQL keep U+FFFD instead), become U+FFFD. The length is unchanged, so
 * offsets hold; the text then reads the same after a restart as before it.
 */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD').replace(LONE_SURROGATE, '\uFFFD');
}
