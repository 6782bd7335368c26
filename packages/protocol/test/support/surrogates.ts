/** Whether cutting `text` at `length` code units would leave the high half of a surrogate pair without its low half. */
export function endsInsidePair(text: string, length: number): boolean {
  if (length <= 0 || length >= text.length) return false;
  const before = text.charCodeAt(length - 1);
  const after = text.charCodeAt(length);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
