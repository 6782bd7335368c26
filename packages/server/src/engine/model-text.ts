import { storableText } from '@promethea/cpp-protocol';

function endsWithHighSurrogate(text: string): boolean {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff;
}

/**
 * A model's deltas made into text that every store holds as it was sent (docs/PROTOCOL.md §3.3): U+0000, which
 * PostgreSQL cannot hold, and lone surrogates, which SQLite and PostgreSQL turn into U+FFFD, become U+FFFD here
 * (the same length, so offsets hold). A delta ending between the two halves of a pair keeps its high half back
 * until the next one, so that no chunk ends inside a pair.
 */
export class ModelText {
  private highHalf = '';

  /** What of `delta` may go out now. */
  take(delta: string): string {
    const text = this.highHalf + delta;
    this.highHalf = endsWithHighSurrogate(text) ? text.slice(-1) : '';
    return storableText(this.highHalf ? text.slice(0, -1) : text);
  }

  /** At the end of the stream: a high half whose low half never came, as U+FFFD. */
  rest(): string {
    const rest = this.highHalf ? '\uFFFD' : '';
    this.highHalf = '';
    return rest;
  }
}
