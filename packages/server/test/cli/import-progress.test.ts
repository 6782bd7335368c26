import { describe, expect, it } from 'vitest';
import { ImportProgress, progressLine } from '../../src/cli/import-progress.js';

describe('the import progress', () => {
  it('draws a bar by bytes read, with the conversations, the megabytes and the rate', () => {
    const line = progressLine({
      bytesRead: 128 * 1024 * 1024,
      size: 256 * 1024 * 1024,
      items: 10_400,
      elapsedMs: 5_000,
    });
    expect(line).toBe('[############------------]  50%  10,400 conversations  128/256 MB  2,080/s');
    expect(progressLine({ bytesRead: 0, size: 2 * 1024 * 1024, items: 0, elapsedMs: 0 })).toBe(
      '[------------------------]   0%  0 conversations  0.0/2.0 MB  0/s',
    );
  });

  it('redraws one line of a terminal, and writes nothing to a pipe or a file', () => {
    const written: string[] = [];
    const terminal = { isTTY: true, write: (text: string) => written.push(text) } as unknown as NodeJS.WriteStream;
    let now = 0;
    const progress = new ImportProgress(terminal, () => now);
    now = 1_000;
    progress.update(50, 100, 1);
    now += 99;
    progress.update(60, 100, 2); // within 100 ms of the last: not redrawn
    now += 1;
    progress.update(70, 100, 3);
    progress.end();
    expect(written).toHaveLength(3);
    expect(written[0]).toBe(`\r[${'#'.repeat(12)}${'-'.repeat(12)}]  50%  1 conversations  0.0/0.0 MB  1/s\x1b[K`);
    expect(written[1]).toMatch(/^\r\[#{17}-{7}\] {2}70% {2}3 conversations /);
    expect(written[2]).toBe('\n');

    const piped: string[] = [];
    const pipe = { isTTY: false, write: (text: string) => piped.push(text) } as unknown as NodeJS.WriteStream;
    const silent = new ImportProgress(pipe);
    silent.update(50, 100, 1);
    silent.end();
    expect(piped).toEqual([]);
  });
});
