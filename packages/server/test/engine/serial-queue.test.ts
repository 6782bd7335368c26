import { describe, expect, it } from 'vitest';
import { SerialQueue } from '../../src/engine/serial-queue.js';

describe('a serial queue', () => {
  it('runs its tasks one at a time, in the order they were queued, a failure not stopping the next', async () => {
    const queue = new SerialQueue();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const first = queue.run(() =>
      new Promise<void>((resolve) => (releaseFirst = resolve)).then(() => void order.push('first')),
    );
    const failing = queue.run(async () => {
      order.push('second');
      throw new Error('no');
    });
    const third = queue.run(async () => void order.push('third'));
    await Promise.resolve();
    expect(order).toEqual([]);
    releaseFirst();
    await first;
    await expect(failing).rejects.toThrow('no');
    await third;
    expect(order).toEqual(['first', 'second', 'third']);
  });

  it('fails every task not yet started once closed', async () => {
    const queue = new SerialQueue();
    queue.close(new Error('thread deleted'));
    await expect(queue.run(async () => 'ran')).rejects.toThrow('thread deleted');
  });

  it('holds, until its first task, the one settled promise every queue shares', () => {
    expect(new SerialQueue()['tail']).toBe(new SerialQueue()['tail']);
  });
});
