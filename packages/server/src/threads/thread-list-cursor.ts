import { CPPError, ErrorCode, THREAD_ID_PATTERN, type ThreadSummary } from '@promethea/cpp-protocol';
import type { ThreadPosition } from '../store/conversation-store.js';

/**
 * The reference server's list cursor (docs/PROTOCOL.md §6.3): the last listed thread's `updatedAt`, a dot, its id.
 * It names a place in the order, not a thread, so it stays valid whatever happens to that thread.
 */
export function threadListCursor({ updatedAt, threadId }: ThreadSummary): string {
  return `${updatedAt}.${threadId}`;
}

/** The place a cursor names; INVALID_FRAME for text this server did not make. */
export function readThreadListCursor(cursor: string): ThreadPosition {
  const dot = cursor.indexOf('.');
  const updatedAt = Number(cursor.slice(0, dot));
  const threadId = cursor.slice(dot + 1);
  const digits = /^\d{1,16}$/.test(cursor.slice(0, dot));
  if (dot < 0 || !digits || !Number.isSafeInteger(updatedAt) || !THREAD_ID_PATTERN.test(threadId))
    throw new CPPError(
      ErrorCode.INVALID_FRAME,
      'payload.cursor: not a cursor of this server; list again from the start',
    );
  return { updatedAt, threadId };
}
