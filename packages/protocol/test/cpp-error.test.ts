import { describe, expect, it, vi } from 'vitest';
import { CPPError, ERROR_CODES, ErrorCode } from '@promethea/cpp-protocol';

describe('CPPError', () => {
  it('carries its code and message', () => {
    const error = new CPPError(ErrorCode.NOT_FOUND, 'node msg_a is not in thread thread_b');
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('CPPError');
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toBe('node msg_a is not in thread thread_b');
  });

  it('is recognised across a second copy of the module, where instanceof fails', async () => {
    vi.resetModules();
    const copy = await import('../src/cpp-error.js');
    expect(copy.CPPError).not.toBe(CPPError);

    const fromCopy = new copy.CPPError(ErrorCode.CONFLICT, 'from the other copy');
    expect(fromCopy instanceof CPPError).toBe(false);
    expect(CPPError.isInstance(fromCopy)).toBe(true);
    expect(copy.CPPError.isInstance(new CPPError(ErrorCode.CONFLICT, 'from this copy'))).toBe(true);
  });

  it.each([
    new Error('plain'),
    { code: 'NOT_FOUND', message: 'look-alike', name: 'CPPError' },
    null,
    undefined,
    'CPPError',
    0,
  ])('does not recognise %j', (value) => {
    expect(CPPError.isInstance(value)).toBe(false);
  });

  it('lists every error code once', () => {
    expect(ERROR_CODES).toEqual(Object.values(ErrorCode));
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    for (const [key, value] of Object.entries(ErrorCode)) expect(value).toBe(key);
  });
});
