import { expect } from 'vitest';
import { CPPError, type ErrorCode } from '@promethea/cpp-protocol';

/** Asserts that `action` throws a CPPError with `code`. */
export function expectCPPError(action: () => unknown, code: ErrorCode): void {
  let error: unknown;
  try {
    action();
  } catch (caught) {
    error = caught;
  }
  expect(CPPError.isInstance(error), `expected a CPPError ${code}, got ${String(error)}`).toBe(true);
  expect((error as CPPError).code).toBe(code);
}
