import { CPPError, ErrorCode } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { commitUntilStored } from '../../src/engine/commit-retry.js';
import { isUnreachable } from '../../src/unreachable.js';

const refused = () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
/** Short waits: what is checked is which failures are tried again, and the waits' progression. */
const schedule = { firstDelayMs: 1, maxDelayMs: 4 };

describe('an answer end committed until the store takes it', () => {
  it('is tried again while the store is unreachable, each wait doubled up to the longest', async () => {
    let attempts = 0;
    const waits: number[] = [];
    await commitUntilStored(
      async () => {
        attempts += 1;
        if (attempts < 5) throw refused();
      },
      { wanted: () => true, onRetry: (_error, delayMs) => waits.push(delayMs), schedule },
    );
    expect(attempts).toBe(5);
    expect(waits).toEqual([1, 2, 4, 4]);
  });

  it('fails at once for any other failure, and stops trying once the commit is no longer wanted', async () => {
    const conflict = new CPPError(ErrorCode.CONFLICT, 'another server committed first');
    const options = { wanted: () => true, onRetry: () => {}, schedule };
    await expect(commitUntilStored(() => Promise.reject(conflict), options)).rejects.toBe(conflict);

    // No longer wanted while it waits (another server took the answer over): no further attempt.
    let attempts = 0;
    let wanted = true;
    const attempt = async () => {
      attempts += 1;
      throw refused();
    };
    await commitUntilStored(attempt, { ...options, wanted: () => wanted, onRetry: () => (wanted = false) });
    expect(attempts).toBe(1);
  });
});

describe('a failure that is the service being unreachable', () => {
  it("is the network's, a database going down, or a connection lost under node-postgres or ioredis", () => {
    const failures = [
      refused(),
      new AggregateError([new Error('other'), refused()]),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection is closed.'),
      new Error('Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option.'),
    ];
    for (const failure of failures) expect(isUnreachable(failure)).toBe(true);
  });

  it('is not a refusal of the operation itself, nor a bug', () => {
    const failures = [
      new CPPError(ErrorCode.CONFLICT, 'version 3 is not 4'),
      Object.assign(new Error('duplicate key value'), { code: '23505' }),
      new TypeError("Cannot read properties of undefined (reading 'id')"),
      'a string',
    ];
    for (const failure of failures) expect(isUnreachable(failure)).toBe(false);
  });
});
