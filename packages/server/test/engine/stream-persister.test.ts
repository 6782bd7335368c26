import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore, type StreamedText } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { StreamPersister, type StreamingSource } from '../../src/engine/stream-persister.js';

/** A store that records each batch it is given (one call = one transaction), and can refuse or hold them. */
class RecordingStore extends MemoryStore {
  readonly batches: StreamedText[][] = [];
  failure: Error | undefined;
  held: Promise<void> | undefined;

  override async saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    this.batches.push([...batch]);
    await this.held;
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
        { threadId: 'thread_a', nodeId: 'a', offset: 0, text: 'Hello' },
        { threadId: 'thread_b', nodeId: 'b', offset: 0, text: 'Wor' },
      ],
    ]);
  });

  it('writes only what streamed since the last batch, and nothing when nothing new streamed', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    const answer = source('a', 'One');
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
    answer.text = 'One two';
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    expect(store.batches.map((batch) => batch.map(({ offset, text }) => [offset, text]))).toEqual([[[0, 'One']], [[3, ' two']]]);
  });

  it('forgets an answer that ended: its commit writes it', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    persister.touch(source('a', 'Kept'));
    persister.touch(source('b', 'Ended'));
    persister.forget('b');
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toEqual([[{ threadId: 'thread_a', nodeId: 'a', offset: 0, text: 'Kept' }]]);
  });

  it('flush writes the batch at once; after stop nothing is written, not even once the batch being written ends', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    let release = (): void => undefined;
    store.held = new Promise((resolve) => (release = resolve));
    persister.touch(source('a', 'Now'));
    persister.flush();
    expect(store.batches).toHaveLength(1);
    persister.touch(source('b', 'Never'));
    release();
    persister.stop();
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
  });

  it('reports a batch the store refused, and writes its text again with the next, from the same offset', async () => {
    const store = new RecordingStore();
    const reported: Array<{ error: unknown; batch: readonly StreamedText[] }> = [];
    const persister = new StreamPersister(store, INTERVAL_MS, (error, batch) => reported.push({ error, batch }));
    const answer = source('a', 'Saved');
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    store.failure = new Error('disk full');
    answer.text = 'Saved, lost';
    persister.touch(answer);
    await sleep(INTERVAL_MS * 3);
    // Tried again every interval while the store refuses it.
    expect(reported[0]).toEqual({ error: store.failure, batch: [{ threadId: 'thread_a', nodeId: 'a', offset: 5, text: ', lost' }] });
    expect(reported.every(({ batch }) => batch[0]?.offset === 5)).toBe(true);
    store.failure = undefined;
    answer.text = 'Saved, lost, then found';
    await sleep(INTERVAL_MS * 3);
    expect(store.batches.at(-1)).toEqual([{ threadId: 'thread_a', nodeId: 'a', offset: 5, text: ', lost, then found' }]);
  });

  it('writes one batch at a time: the next waits for the one being written, and follows from where it ended', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    let release = (): void => undefined;
    store.held = new Promise((resolve) => (release = resolve));
    const answer = source('a', 'Slow');
    persister.touch(answer);
    persister.flush();
    answer.text = 'Slow store';
    persister.touch(answer);
    persister.flush();
    await sleep(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
    store.held = undefined;
    release();
    await sleep(INTERVAL_MS * 3);
    expect(store.batches.map((batch) => batch.map(({ offset, text }) => [offset, text]))).toEqual([[[0, 'Slow']], [[4, ' store']]]);
  });
});
