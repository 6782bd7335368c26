const marker = Symbol.for('@promethea/cpp-server.StoreConflictError');

/** A commit lost a race: the thread moved on since the change was planned, or an id is already taken. */
export class StoreConflictError extends Error {
  readonly [marker] = true;
  override readonly name = 'StoreConflictError';

  static isInstance(value: unknown): value is StoreConflictError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
