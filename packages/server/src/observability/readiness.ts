import { setTimeout as sleep } from 'node:timers/promises';

/** One thing the server needs in order to serve; `check` rejects, saying why, when it is not there. */
export type ReadinessCheck = () => Promise<void>;

export type CheckStatus = 'ok' | 'failed' | 'timeout';

/** GET /readyz's answer. Failures are not described here (the log says why): probes can be public. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckStatus>;
}

/** A check that has not answered by then has failed: a hung database must not hang the probe. */
const CHECK_TIMEOUT_MS = 2000;

/** Runs the checks at once; `failed` hears why each failing one failed. */
export async function checkReadiness(
  checks: Record<string, ReadinessCheck>,
  failed: (name: string, error: unknown) => void,
): Promise<ReadinessReport> {
  const entries = await Promise.all(
    Object.entries(checks).map(
      async ([name, check]): Promise<[string, CheckStatus]> => [name, await runCheck(name, check, failed)],
    ),
  );
  return { ready: entries.every(([, status]) => status === 'ok'), checks: Object.fromEntries(entries) };
}

async function runCheck(
  name: string,
  check: ReadinessCheck,
  failed: (name: string, error: unknown) => void,
): Promise<CheckStatus> {
  const timeout = new AbortController();
  try {
    const finished = await Promise.race([
      check().then(() => true),
      sleep(CHECK_TIMEOUT_MS, false, { signal: timeout.signal }),
    ]);
    if (finished) return 'ok';
    failed(name, new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`));
    return 'timeout';
  } catch (error) {
    failed(name, error);
    return 'failed';
  } finally {
    timeout.abort();
  }
}
