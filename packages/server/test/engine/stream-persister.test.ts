import type { TextPart } from '@promethea/cpp-protocol';
import { MemoryStore, type StreamedText } from '@promethea/cpp-server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SAVE_SLICE, StreamPersister } from '../../src/engine/stream-persister.js';

/** A store that records each batch it is given (one call = one transaction), and can refuse or hold them. */
class RecordingStore extends MemoryStore {
  readonly batches: StreamedText[][] = [];
  failure: Error | undefined;
  /** The calls (by their index) that fail, beside every call while `failure` is set. */
  readonly refused = new Set<number>();
  held: Promise<void> | undefined;
  /** Called as each batch arrives. */
  onSave: (() => void) | undefined;

  override async saveStreamedText(batch: readonly StreamedText[]): Promise<void> {
    this.batches.push([...batch]);
    this.onSave?.();
    await this.held;
    if (this.failure) throw this.failure;
    if (this.refused.has(this.batches.length - 1)) throw new Error(`batch ${this.batches.length - 1} refused`);
  }
}

/** Lets the event loop turn until the store has been given `count` batches. */
async function batchesGiven(store: RecordingStore, count: number): Promise<void> {
  while (store.batches.length < count) await new Promise(setImmediate);
}

/** An answer as the engine streams it: each chunk of a part given to the persister at that part's offset. */
function answer(
  persister: StreamPersister,
  nodeId: string,
  lengths: Record<TextPart, number> = { content: 0, reasoning: 0 },
) {
  const sent = { ...lengths };
  const sendPart = (part: TextPart, text: string) => {
    persister.append(`thread_${nodeId}`, nodeId, part, sent[part], text);
    sent[part] += text.length;
  };
  return { send: (text: string) => sendPart('content', text), reason: (text: string) => sendPart('reasoning', text) };
}

const INTERVAL_MS = 30;

/** Moves the fake clock on by `ms`, letting the store's promises settle between timers. */
const pass = (ms: number) => vi.advanceTimersByTimeAsync(ms);

describe('StreamPersister', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('saves every answer that streamed in an interval in one batch, with all it streamed by then', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    const [first, second] = [answer(persister, 'a'), answer(persister, 'b')];
    first.send('Hel');
    second.send('Wor');
    first.send('lo');
    await pass(INTERVAL_MS - 1);
    expect(store.batches).toEqual([]);
    await pass(1);
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
    const one = answer(persister, 'a');
    one.send('One');
    await pass(INTERVAL_MS * 3);
    await pass(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
    one.send(' two');
    await pass(INTERVAL_MS * 3);
    expect(store.batches.map((batch) => batch.map(({ offset, text }) => [offset, text]))).toEqual([
      [[0, 'One']],
      [[3, ' two']],
    ]);
  });

  it('saves the reasoning apart from the text, and a continued answer from the length it had', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    const fresh = answer(persister, 'a');
    const continued = answer(persister, 'b', { content: 7, reasoning: 3 });
    fresh.reason('Let me');
    fresh.send('Hi');
    continued.send(' more');
    await pass(INTERVAL_MS);
    fresh.reason(' think');
    continued.reason('!');
    await pass(INTERVAL_MS);
    expect(store.batches).toEqual([
      [
        { threadId: 'thread_a', nodeId: 'a', part: 'reasoning', offset: 0, text: 'Let me' },
        { threadId: 'thread_a', nodeId: 'a', offset: 0, text: 'Hi' },
        { threadId: 'thread_b', nodeId: 'b', offset: 7, text: ' more' },
      ],
      [
        { threadId: 'thread_a', nodeId: 'a', part: 'reasoning', offset: 6, text: ' think' },
        { threadId: 'thread_b', nodeId: 'b', part: 'reasoning', offset: 3, text: '!' },
      ],
    ]);
  });

  it('forgets an answer that ended: its commit writes it', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    answer(persister, 'a').send('Kept');
    answer(persister, 'b').send('Ended');
    persister.forget('b');
    await pass(INTERVAL_MS * 3);
    expect(store.batches).toEqual([[{ threadId: 'thread_a', nodeId: 'a', offset: 0, text: 'Kept' }]]);
  });

  it('flush writes the batch at once; after stop nothing is written, not even once the batch being written ends', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    let release = (): void => undefined;
    store.held = new Promise((resolve) => (release = resolve));
    answer(persister, 'a').send('Now');
    persister.flush();
    expect(store.batches).toHaveLength(1);
    answer(persister, 'b').send('Never');
    release();
    persister.stop();
    await pass(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
  });

  it('reports a batch the store refused, and writes its text again with the next, from the same offset', async () => {
    const store = new RecordingStore();
    const reported: Array<{ error: unknown; batch: readonly StreamedText[] }> = [];
    const persister = new StreamPersister(store, INTERVAL_MS, (error, batch) => reported.push({ error, batch }));
    const one = answer(persister, 'a');
    one.send('Saved');
    await pass(INTERVAL_MS * 3);
    store.failure = new Error('disk full');
    one.send(', lost');
    await pass(INTERVAL_MS * 3);
    // Tried again every interval while the store refuses it.
    expect(reported[0]).toEqual({
      error: store.failure,
      batch: [{ threadId: 'thread_a', nodeId: 'a', offset: 5, text: ', lost' }],
    });
    expect(reported.every(({ batch }) => batch[0]?.offset === 5)).toBe(true);
    store.failure = undefined;
    one.send(', then found');
    await pass(INTERVAL_MS * 3);
    expect(store.batches.at(-1)).toEqual([
      { threadId: 'thread_a', nodeId: 'a', offset: 5, text: ', lost, then found' },
    ]);
  });

  it('writes one batch at a time: the next waits for the one being written, and follows from where it ended', async () => {
    const store = new RecordingStore();
    const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
    let release = (): void => undefined;
    store.held = new Promise((resolve) => (release = resolve));
    const slow = answer(persister, 'a');
    slow.send('Slow');
    persister.flush();
    slow.send(' store');
    persister.flush();
    await pass(INTERVAL_MS * 3);
    expect(store.batches).toHaveLength(1);
    store.held = undefined;
    release();
    await pass(INTERVAL_MS * 3);
    expect(store.batches.map((batch) => batch.map(({ offset, text }) => [offset, text]))).toEqual([
      [[0, 'Slow']],
      [[4, ' store']],
    ]);
  });

  describe(`a batch of more than ${SAVE_SLICE} answers`, () => {
    /** `count` answers `n0`, `n1`… that each sent `text`. */
    function streaming(persister: StreamPersister, count: number) {
      return Array.from({ length: count }, (_, index) => {
        const one = answer(persister, `n${index}`);
        one.send('text');
        return one;
      });
    }
    const nodesOf = (batch: readonly StreamedText[]) => batch.map(({ nodeId }) => nodeId);

    it('is saved a slice at a time, the first at once, the event loop turning before each of the others', async () => {
      const store = new RecordingStore();
      const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
      streaming(persister, SAVE_SLICE * 2 + 1);
      let turns = 0;
      const countTurns = () => {
        turns += 1;
        if (turns < 10) setImmediate(countTurns);
      };
      setImmediate(countTurns);
      const turnsAtSave: number[] = [];
      store.onSave = () => turnsAtSave.push(turns);
      persister.flush();
      expect(store.batches.map((batch) => batch.length)).toEqual([SAVE_SLICE]);
      await batchesGiven(store, 3);
      expect(store.batches.map((batch) => batch.length)).toEqual([SAVE_SLICE, SAVE_SLICE, 1]);
      expect(turnsAtSave[0]).toBe(0);
      expect(turnsAtSave[1]).toBeGreaterThan(turnsAtSave[0]!);
      expect(turnsAtSave[2]).toBeGreaterThan(turnsAtSave[1]!);
      expect(store.batches.flat().every(({ offset, text }) => offset === 0 && text === 'text')).toBe(true);
    });

    it('leaves out of a later slice an answer that ended meanwhile, and the old text of one continued anew', async () => {
      const store = new RecordingStore();
      const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
      streaming(persister, SAVE_SLICE * 2);
      persister.flush();
      // Between the first slice and the second: n70 ends, and n71 ends and is continued from its committed 4
      // characters.
      persister.forget(`n${SAVE_SLICE + 6}`);
      persister.forget(`n${SAVE_SLICE + 7}`);
      answer(persister, `n${SAVE_SLICE + 7}`, { content: 4, reasoning: 0 }).send(' more');
      await batchesGiven(store, 2);
      expect(nodesOf(store.batches[1]!)).toHaveLength(SAVE_SLICE - 2);
      expect(nodesOf(store.batches[1]!)).not.toContain(`n${SAVE_SLICE + 6}`);
      expect(nodesOf(store.batches[1]!)).not.toContain(`n${SAVE_SLICE + 7}`);
      await pass(INTERVAL_MS);
      expect(store.batches[2]).toEqual([
        { threadId: `thread_n${SAVE_SLICE + 7}`, nodeId: `n${SAVE_SLICE + 7}`, offset: 4, text: ' more' },
      ]);
    });

    it('when a slice is refused, keeps the slices before it saved and writes it and the rest again with the next batch', async () => {
      const store = new RecordingStore();
      const reported: Array<readonly StreamedText[]> = [];
      const persister = new StreamPersister(store, INTERVAL_MS, (_error, batch) => reported.push(batch));
      const answers = streaming(persister, SAVE_SLICE * 3);
      store.refused.add(1);
      persister.flush();
      await batchesGiven(store, 2);
      await pass(0);
      expect(reported.map(nodesOf)).toEqual([nodesOf(store.batches[1]!)]);
      for (const one of answers) one.send('+');
      await pass(INTERVAL_MS);
      await batchesGiven(store, 5);
      const [, , ...retried] = store.batches;
      // The first slice's answers write what came since; the others all they have, from where they began.
      expect(retried.flat()).toHaveLength(SAVE_SLICE * 3);
      for (const { nodeId, offset, text } of retried.flat()) {
        const index = Number(nodeId.slice(1));
        expect([offset, text]).toEqual(index < SAVE_SLICE ? [4, '+'] : [0, 'text+']);
      }
    });

    it('writes no slice after stop', async () => {
      const store = new RecordingStore();
      const persister = new StreamPersister(store, INTERVAL_MS, () => undefined);
      streaming(persister, SAVE_SLICE * 2);
      persister.flush();
      persister.stop();
      await new Promise(setImmediate);
      await new Promise(setImmediate);
      expect(store.batches).toHaveLength(1);
    });
  });
});
