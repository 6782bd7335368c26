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
