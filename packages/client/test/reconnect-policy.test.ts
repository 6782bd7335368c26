import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONNECT_POLICY, isFinalClose, reconnectDelay, reconnectPolicy } from '../src/reconnect-policy.js';

describe('the reconnect policy', () => {
  it('is on by default, off with false, and fills what the options leave out with the defaults', () => {
    expect(reconnectPolicy(undefined)).toEqual(DEFAULT_RECONNECT_POLICY);
    expect(reconnectPolicy(true)).toEqual(DEFAULT_RECONNECT_POLICY);
    expect(reconnectPolicy(false)).toBeUndefined();
    expect(reconnectPolicy({ maxAttempts: 3 })).toEqual({ ...DEFAULT_RECONNECT_POLICY, maxAttempts: 3 });
  });

  it('doubles the pause after each failed attempt, up to the cap', () => {
    const policy = { ...DEFAULT_RECONNECT_POLICY, initialDelayMs: 100, maxDelayMs: 1000, jitter: 0 };
    expect([1, 2, 3, 4, 5, 6].map((attempt) => reconnectDelay(policy, attempt))).toEqual([
      100, 200, 400, 800, 1000, 1000,
    ]);
  });

  it('draws each pause between (1 - jitter) and all of it', () => {
    const policy = { ...DEFAULT_RECONNECT_POLICY, initialDelayMs: 1000, jitter: 0.5 };
    expect(reconnectDelay(policy, 1, () => 0)).toBe(1000);
    expect(reconnectDelay(policy, 1, () => 0.5)).toBe(750);
    expect(reconnectDelay(policy, 1, () => 0.999_999)).toBe(500);
  });

  it('retries closes another connection may cure, and not those it would not', () => {
    for (const code of [1001, 1006, 1011, 1012, 1013, 4408, 4429]) expect(isFinalClose(code), String(code)).toBe(false);
    for (const code of [1000, 1002, 1003, 1007, 1008, 1009, 4401, 4403, 4500])
      expect(isFinalClose(code), String(code)).toBe(true);
  });
});
