import { CPPError, ErrorCode } from '@promethea/cpp-protocol';

export interface ShownError {
  id: number;
  /** The CPP error code, when the server or client named one: shown on hover, for a bug report. */
  code: string | undefined;
  /** What happened, in words a person reads. */
  message: string;
}

/** The code's meaning when the server's own words are not made for a person. */
const IN_WORDS: Partial<Record<ErrorCode, string>> = {
  [ErrorCode.THREAD_BUSY]: 'An answer is still being written in this conversation. Stop it, or send to pivot it.',
  [ErrorCode.NOT_STREAMING]: 'That answer had already finished.',
  [ErrorCode.CONFLICT]: 'The conversation changed in another tab at the same moment. Try again.',
  [ErrorCode.NOT_FOUND]: 'That conversation or message no longer exists.',
  [ErrorCode.FORBIDDEN]: 'This conversation belongs to someone else.',
  [ErrorCode.UNAUTHORIZED]: 'The server did not accept this browser’s identity. Reload the page.',
  [ErrorCode.UNKNOWN_MODEL]: 'The server does not offer that model any more.',
  [ErrorCode.INTERNAL]: 'The server failed. Nothing was changed; try again.',
  [ErrorCode.FRAME_TOO_LARGE]: 'That was too large for the server to take.',
};

/** The server's words for a prompt over the length limit (ThreadAccess.checkPrompt). */
const PROMPT_TOO_LONG = /^the prompt is (\d+) characters; the limit is (\d+)$/;

/** The server's words for an import document it refused (readImportDocument's reason, under the payload field). */
const IMPORT_REFUSED = /^payload\.document: /;

let lastId = 0;

/** Anything thrown or reported, as a line a person can read. */
export function describeError(error: unknown): ShownError {
  lastId += 1;
  if (CPPError.isInstance(error)) return { id: lastId, code: error.code, message: inWords(error.code, error.message) };
  if (error instanceof Error) return { id: lastId, code: undefined, message: error.message || error.name };
  return { id: lastId, code: undefined, message: String(error) };
}

function inWords(code: string, message: string): string {
  const tooLong = PROMPT_TOO_LONG.exec(message);
  if (tooLong) return promptTooLong(Number(tooLong[1]), Number(tooLong[2]));
  if (IMPORT_REFUSED.test(message)) return sentence(`Nothing was imported: ${message.replace(IMPORT_REFUSED, '')}`);
  return IN_WORDS[code as ErrorCode] ?? sentence(message);
}

/** "This message is 204,800 characters; the limit is 100,000." */
export function promptTooLong(length: number, limit: number): string {
  return `This message is ${length.toLocaleString('en')} characters; the limit is ${limit.toLocaleString('en')}.`;
}

function sentence(message: string): string {
  const trimmed = message.trim();
  if (trimmed === '') return 'Something went wrong.';
  const capital = trimmed[0]!.toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}
