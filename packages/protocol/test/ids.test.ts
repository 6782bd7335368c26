import { describe, expect, it, vi } from 'vitest';
import {
  MESSAGE_ID_PATTERN,
  THREAD_ID_PATTERN,
  isMessageId,
  isThreadId,
  newMessageId,
  newThreadId,
} from '@promethea/cpp-protocol';

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('ids', () => {
  it('generates message and thread ids as their prefix followed by a ULID', () => {
    const messageId = newMessageId();
    const threadId = newThreadId();
    expect(messageId.slice('msg_'.length)).toMatch(ULID);
    expect(threadId.slice('thread_'.length)).toMatch(ULID);
    expect(isMessageId(messageId)).toBe(true);
    expect(isThreadId(threadId)).toBe(true);
    expect(MESSAGE_ID_PATTERN.test(messageId)).toBe(true);
    expect(THREAD_ID_PATTERN.test(threadId)).toBe(true);
  });

  it('sorts ids in the order they were made, also within one millisecond', () => {
    const made = Array.from({ length: 2000 }, (_, index) =>
      index % 2 === 0 ? newThreadId().slice('thread_'.length) : newMessageId().slice('msg_'.length),
    );
    expect([...made].sort()).toEqual(made);
  });

  it('starts with the time in milliseconds, as a ULID does, and counts up within one millisecond', () => {
    const before = Date.now();
    const ulid = newMessageId().slice('msg_'.length);
    const time = [...ulid.slice(0, 10)].reduce(
      (value, digit) => value * 32 + '0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(digit),
      0,
    );
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
    vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ['Date'] });
    try {
      const [first, second] = [newMessageId().slice(4), newMessageId().slice(4)];
      expect(second.slice(0, 10)).toBe(first.slice(0, 10));
      const random = (id: string) =>
        [...id.slice(10)].reduce(
          (value, digit) => value * 32n + BigInt('0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(digit)),
          0n,
        );
      expect(random(second) - random(first)).toBe(1n);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never generates the same id twice', () => {
    const ids = new Set(Array.from({ length: 1000 }, newMessageId));
    expect(ids.size).toBe(1000);
  });

  it.each(['msg_a', 'msg_01H8V0', 'msg_a-b_c', `msg_${'x'.repeat(100)}`])('accepts the message id %s', (id) => {
    expect(isMessageId(id)).toBe(true);
  });

  it.each([
    'msg_',
    'msg',
    'msg_a b',
    'msg_a.b',
    'msg_ä',
    'msg_a\n',
    ' msg_a',
    `msg_${'x'.repeat(101)}`,
    'thread_a',
    'Msg_a',
    42,
    null,
    undefined,
  ])('refuses %j as a message id', (value) => {
    expect(isMessageId(value)).toBe(false);
  });

  it.each(['thread_', 'thread_a/b', 'msg_a', 'thread_a\n', `thread_${'x'.repeat(101)}`, {}, 1])(
    'refuses %j as a thread id',
    (value) => {
      expect(isThreadId(value)).toBe(false);
    },
  );

  it('accepts a thread id of 100 characters after the prefix', () => {
    expect(isThreadId(`thread_${'x'.repeat(100)}`)).toBe(true);
  });
});
