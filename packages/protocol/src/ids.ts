import { ulid } from 'ulid';

/**
 * Ids are opaque to the protocol but their shape is checked at the edge: a prefix, then 1–100 characters of
 * `[A-Za-z0-9_-]`. Generated ids use a ULID so that they sort by creation time.
 */
const ID_BODY = '[A-Za-z0-9_-]{1,100}';

export const MESSAGE_ID_PATTERN = new RegExp(`^msg_${ID_BODY}$`);
export const THREAD_ID_PATTERN = new RegExp(`^thread_${ID_BODY}$`);

export function newMessageId(): string {
  return `msg_${ulid()}`;
}

export function newThreadId(): string {
  return `thread_${ulid()}`;
}

export function isMessageId(value: unknown): value is string {
  return typeof value === 'string' && MESSAGE_ID_PATTERN.test(value);
}

export function isThreadId(value: unknown): value is string {
  return typeof value === 'string' && THREAD_ID_PATTERN.test(value);
}
