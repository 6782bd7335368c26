const marker = Symbol.for('@promethea/cpp-server.StoreConflictError');

/** A commit lost a race: the thread moved on since the change was planned, or an id is already taken. */
export class StoreConflictError extends Error {
  readonly [marker] = true;
  override readonly name = 'StoreConflictError';

  static isInstance(value: unknown): value is StoreConflictError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }

  static threadExists(threadId: string): StoreConflictError {
    return new StoreConflictError(`thread ${threadId} already exists`);
  }

  /** `storedVersion` is undefined when the thread does not exist (any more). */
  static staleVersion(threadId: string, storedVersion: number | undefined, baseVersion: number): StoreConflictError {
    const stored = storedVersion === undefined ? 'does not exist' : `is at version ${storedVersion}`;
    return new StoreConflictError(
      `thread ${threadId} ${stored}; the change was planned against version ${baseVersion}`,
    );
  }

  /** Worded without the thread that has the node: the message reaches the client, to whom that thread may be another's. */
  static nodeInOtherThread(nodeId: string): StoreConflictError {
    return new StoreConflictError(`node id ${nodeId} is already used by a different message`);
  }

  /** The attachment was deleted, or a prompt of another thread carries it: it is this identity's to use no more. */
  static attachmentUnavailable(attachmentId: string): StoreConflictError {
    return new StoreConflictError(`attachment ${attachmentId} is gone or is carried by another thread`);
  }

  static attachmentExists(attachmentId: string): StoreConflictError {
    return new StoreConflictError(`attachment ${attachmentId} already exists`);
  }
}
