import { clearScreenDown, cursorTo, moveCursor, type Interface } from 'node:readline';
import { styleText } from 'node:util';
import wrapAnsi from 'wrap-ansi';
import type { ChatOutput } from './chat-output.js';

/** Starts the line the person types on. */
export const INPUT_PROMPT = '› ';

/**
 * cpp-chat on a terminal: the conversation scrolls above, and the line being typed stays at the bottom, under the
 * answer's unfinished line. Each change redraws only those last rows, so a streaming answer never runs into what is
 * being typed: finished rows are written above for good (the terminal's scrollback keeps them), the unfinished row
 * and the input line are readline's prompt and the line it edits. The text is broken into rows of the terminal's width
 * here, so the unfinished row is always one row, and readline knows how tall the prompt it redraws is.
 *
 * Everything written to the terminal must go through this, or the rows it redraws are not where it thinks.
 */
export class TerminalScreen implements ChatOutput {
  /** The answer's text after its last finished row, drawn above the input line. */
  private unfinished = '';
  /** Once input has ended (Ctrl-D), what is left to show (the rest of an answer) is simply written. */
  private inputEnded = false;

  constructor(
    private readonly input: Interface,
    private readonly terminal: NodeJS.WriteStream,
  ) {
    input.setPrompt(INPUT_PROMPT);
    input.once('close', () => this.endInput());
  }

  stream(text: string): void {
    this.show(inert(text));
  }

  print(text: string): void {
    this.line(inert(text));
  }

  error(text: string): void {
    this.line(this.style('red', inert(text)));
  }

  /** A notice beside the conversation, such as how an answer ended. */
  note(text: string): void {
    this.line(this.style('dim', inert(text)));
  }

  /**
   * The person pressed Enter: readline left the unfinished row and the line typed where they were, as the
   * transcript's record of the turn, and moved below them. The answer, if it goes on, continues on a fresh row.
   */
  submitted(): void {
    this.unfinished = '';
    this.input.setPrompt(INPUT_PROMPT);
    this.input.prompt(true);
  }

  private line(text: string): void {
    this.show(`${this.unfinished === '' ? '' : '\n'}${text}\n`);
  }

  /** The input line goes; the answer's unfinished row stays, for what follows to continue it. */
  private endInput(): void {
    const { rows: drawnAbove } = this.input.getCursorPos();
    moveCursor(this.terminal, 0, -drawnAbove);
    cursorTo(this.terminal, 0);
    clearScreenDown(this.terminal);
    this.terminal.write(this.unfinished);
    this.inputEnded = true;
  }

  private show(added: string): void {
    if (this.inputEnded) {
      const text = this.unfinished + added;
      this.terminal.write(added);
      this.unfinished = text.slice(text.lastIndexOf('\n') + 1);
      return;
    }
    // Rows filled to the width, as the terminal itself would break them: what is shown is exactly the text.
    const rows = wrapAnsi(this.unfinished + added, this.terminal.columns, {
      hard: true,
      wordWrap: false,
      trim: false,
    }).split('\n');
    this.unfinished = rows.pop()!;
    // From the cursor, in the line being typed, up to the first row of what was drawn last; cleared from there.
    const { rows: drawnAbove } = this.input.getCursorPos();
    moveCursor(this.terminal, 0, -drawnAbove);
    cursorTo(this.terminal, 0);
    clearScreenDown(this.terminal);
    this.terminal.write(rows.map((row) => `${row}\n`).join(''));
    // readline redraws its prompt from as many rows above the cursor as the cursor was below the last one's start:
    // standing that far below the finished rows puts the new prompt right under them.
    this.terminal.write('\n'.repeat(drawnAbove));
    this.input.setPrompt(this.unfinished === '' ? INPUT_PROMPT : `${this.unfinished}\n${INPUT_PROMPT}`);
    this.input.prompt(true);
  }

  private style(format: 'red' | 'dim', text: string): string {
    return this.terminal.hasColors() ? styleText(format, text) : text;
  }
}

/**
 * Text from the model or the server, made unable to act on the terminal: an escape sequence in an answer could
 * clear the screen or move the cursor. Control characters go, tabs become spaces; line breaks stay.
 */
function inert(text: string): string {
  return text
    .replace(/\t/g, '    ')
    .replace(/\r\n?/g, '\n')
    .replace(/[\p{Cc}\u2028\u2029]/gu, (character) => (character === '\n' ? character : ''));
}
