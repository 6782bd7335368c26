/**
 * Runs `task(0..count-1)` with at most `concurrency` in flight: thousands of connections opened at once would
 * overflow the listen backlog and measure the kernel's SYN retries instead of the server.
 */
export async function inBatches<Result>(
  count: number,
  concurrency: number,
  task: (index: number) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array<Result>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      results[index] = await task(index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return results;
}
