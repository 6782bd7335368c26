import { CPPError } from '@promethea/cpp-protocol';

export interface ShownError {
  id: number;
  /** The CPP error code, when the server or client named one. */
  code: string | undefined;
  message: string;
}

let lastId = 0;

/** Anything thrown or reported, as a line a person can read. */
export function describeError(error: unknown): ShownError {
  lastId += 1;
  if (CPPError.isInstance(error)) return { id: lastId, code: error.code, message: error.message };
  if (error instanceof Error) return { id: lastId, code: undefined, message: error.message || error.name };
  return { id: lastId, code: undefined, message: String(error) };
}
