/** Where cpp-chat shows the conversation: a terminal it draws on (TerminalScreen), or plain streams (PlainOutput). */
export interface ChatOutput {
  /** A piece of an answer, as it streams: it may end mid-line. */
  stream(text: string): void;
  /** Lines of their own (command output, notices), begun on a fresh line after an answer's unfinished one. */
  print(text: string): void;
  /** A notice beside the conversation (how an answer ended), as a line of its own. */
  note(text: string): void;
  /** A failure, in words, as a line of its own. */
  error(text: string): void;
}

/** Output to pipes or files: the answer's text as it comes, errors to the error stream. */
export class PlainOutput implements ChatOutput {
  private midLine = false;

  constructor(
    private readonly out: { write(text: string): unknown },
    private readonly errors: { write(text: string): unknown },
  ) {}

  stream(text: string): void {
    if (text === '') return;
    this.out.write(text);
    this.midLine = !text.endsWith('\n');
  }

  print(text: string): void {
    this.out.write(`${this.midLine ? '\n' : ''}${text}\n`);
    this.midLine = false;
  }

  note(text: string): void {
    this.print(text);
  }

  error(text: string): void {
    this.errors.write(`${text}\n`);
  }
}
