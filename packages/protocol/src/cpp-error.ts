import type { ErrorCode } from './error-codes.js';

const marker = Symbol.for('@promethea/cpp-protocol.CPPError');

/**
 * A failure that maps to one `CPP_ERROR` frame. Recognised with `CPPError.isInstance` rather than `instanceof`,
 * so that two copies of this package in one bundle still agree.
 */
export class CPPError extends Error {
  readonly [marker] = true;
  override readonly name = 'CPPError';

  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }

  static isInstance(value: unknown): value is CPPError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
