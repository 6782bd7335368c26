import { ThreadListMirror, type ThreadSummary } from '@promethea/cpp-client';
import { describe, expect, it } from 'vitest';

function summary(threadId: string, updatedAt: number, version = 0): ThreadSummary {
  return { threadId, title: threadId, createdAt: 0, updatedAt, version, nodeCount: 0 };
}

const ids = (mirror: ThreadListMirror) => mirror.threads.map((thread) => thread.threadId);

describe('ThreadListMirror', () => {
  it('keeps pages in the server order and tells whether there are more', () => {
    const mirror = new ThreadListMirror();
    expect(mirror.hasMore).toBe(false);
    mirror.addPage({ threads: [summary('thread_c', 30), summary('thread_b', 20)], nextCursor: '20.thread_b' });
    expect(mirror.hasMore).toBe(true);
    expect(mirror.nextCursor).toBe('20.thread_b');
    mirror.addPage({ threads: [summary('thread_a', 10)], nextCursor: null });
    expect(ids(mirror)).toEqual(['thread_c', 'thread_b', 'thread_a']);
    expect(mirror.hasMore).toBe(false);
    expect(mirror.nextCursor).toBeUndefined();
  });

  it('moves an updated thread to its place, ties by greater id, and keeps the greater version whatever the order', () => {
    const mirror = new ThreadListMirror();
    mirror.addPage({ threads: [summary('thread_c', 30, 1), summary('thread_b', 20, 1)], nextCursor: null });
    expect(mirror.update(summary('thread_b', 30, 2))).toBe(true);
    expect(ids(mirror)).toEqual(['thread_c', 'thread_b']);
    expect(mirror.update(summary('thread_b', 40, 3))).toBe(true);
    expect(ids(mirror)).toEqual(['thread_b', 'thread_c']);

    // A page read before that update arrives after it: it changes nothing.
    const before = mirror.threads;
    mirror.addPage({ threads: [summary('thread_c', 30, 1), summary('thread_b', 20, 1)], nextCursor: null });
    expect(mirror.threads).toBe(before);
    expect(mirror.update(summary('thread_b', 40, 3))).toBe(false);
    expect(mirror.threads[0]).toEqual(summary('thread_b', 40, 3));
  });

  it('drops a deleted thread and ignores what arrives of it afterwards, also after a reset', () => {
    const mirror = new ThreadListMirror();
    mirror.addPage({ threads: [summary('thread_b', 20), summary('thread_a', 10)], nextCursor: null });
    const before = mirror.threads;
    expect(mirror.remove('thread_b')).toBe(true);
    expect(before).toHaveLength(2);
    expect(mirror.update(summary('thread_b', 50, 9))).toBe(false);
    mirror.reset();
    mirror.addPage({ threads: [summary('thread_b', 20), summary('thread_a', 10)], nextCursor: null });
    expect(ids(mirror)).toEqual(['thread_a']);
    expect(mirror.remove('thread_z')).toBe(false);
  });
});
