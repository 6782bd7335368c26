const TYPE_FIRST = /^\{"type":"([A-Z_]+)"/;

/** The type of a frame made by `encodeServerFrame`, which writes it first: read without parsing the whole frame. */
export function encodedFrameType(frame: string): string {
  return TYPE_FIRST.exec(frame)?.[1] ?? 'unknown';
}
