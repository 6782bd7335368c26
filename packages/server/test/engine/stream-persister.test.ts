import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore, type StreamingContent } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { StreamPersister, type StreamingSource } from '../../src/engine/stream-persister.js';

/** A store that records each batch it is given (one call = one transaction). */
class RecordingStore extends MemoryStore {
  readonly batches: StreamingContent[][] = [];
  failure: Error | undefined;

  override async saveStreamingContents(batch: readonly StreamingContent[]): Promise<void> {
    this.batches.push([...batch]);
    if (this.failure) throw this.failure;
  }
}

function source(nodeId: string, text: string): StreamingSource & { text: string } {
  return { threadId: `thread_${nodeId}`, nodeId, text };
}

const INTERVAL_MS = 30;

describe('StreamPersister', () => {
  it('saves every answer touched in an interval in one batch, with the text each has when the batch is written', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    const first = source('a', 'Hel');
    const second = source('b', 'Wor');
    persister.touch(first);
    persister.touch(second);
    first.text = 'Hello';
    persister.touch(first);
    expect(store.batches).toEqual([]);
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toEqual([
      [
        { threadId: 'thread_a', nodeId: 'a', content: 'Hello' },
        { threadId: 'thread_b', nodeId: 'b', content: 'Wor' },
      ],
    ]);
  });

  it('writes nothing when nothing new streamed, and each answer again only once it is touched again', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    const answer = source('a', 'One');
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    await sleep(INTERVAL_MS * 2);
    expect(store.batches).toHaveLength(1);
    answer.text = 'One two';
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    expect(store.batches.map((batch) => batch.map((entry) => entry.content))).toEqual([['One'], ['One two']]);
  });

  it('forgets an answer that ended: its commit writes it', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    persister.touch(source('a', 'Kept'));
    persister.touch(source('b', 'Ended'));
    persister.forget('b');
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toEqual([[{ threadId: 'thread_a', nodeId: 'a', content: 'Kept' }]]);
  });

  it('flush writes the batch at once; stop leaves it unwritten', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    persister.touch(source('a', 'Now'));
    persister.flush();
    expect(store.batches).toHaveLength(1);
    persister.touch(source('b', 'Never'));
    persister.stop();
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
  });

  it('reports a batch the store refused, with its entries', async () => {
    const store = new RecordingStore();
    store.failure = new Error('disk full');
    const reported: Array<{ error: unknown; batch: readonly StreamingContent[] }> = [];
    const persister = new StreamPersister(store, INTERVAL_MS, (error, batch) => reported.push({ error, batch }));
    persister.touch(source('a', 'Lost'));
    await sleep(INTERVAL_MS * 3);
    expect(reported).toEqual([{ error: store.failure, batch: [{ threadId: 'thread_a', nodeId: 'a', content: 'Lost' }] }]);
  });
});
