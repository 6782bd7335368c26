/** How observed work ended: `undefined` when it succeeded. */
export type Failure = { error: unknown } | undefined;

/**
 * Runs `work` and calls `settled` once it is over: at once when it is synchronous, when its promise settles
 * otherwise. Returns exactly what `work` returns (the same promise), and rethrows what it throws.
 */
export function runObserved<Result>(work: () => Result, settled: (failure: Failure) => void): Result {
  let result: Result;
  try {
    result = work();
  } catch (error) {
    settled({ error });
    throw error;
  }
  if (isPromiseLike(result)) {
    result.then(
      () => settled(undefined),
      (error: unknown) => settled({ error }),
    );
  } else settled(undefined);
  return result;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}
