import { describe, expect, it } from 'vitest';
import { redactSecrets, retryAfterMs, statusFailure } from '../../src/model/provider-error.js';
import { vendorErrorMessage } from '../../src/model/upstream/http-post.js';

describe('redactSecrets', () => {
  it('removes the configured key wherever it appears', () => {
    expect(redactSecrets('bad key local-secret-123 given', 'local-secret-123')).toBe('bad key [redacted] given');
  });

  it("removes key-shaped strings, such as OpenAI's masked echo of a wrong key", () => {
    expect(redactSecrets('Incorrect API key provided: sk-proj-abc***************************wxyz.', undefined)).toBe(
      'Incorrect API key provided: [redacted]',
    );
    expect(redactSecrets('invalid gsk_0123456789abcdef', undefined)).toBe('invalid [redacted]');
  });

  it('cuts a long message to fit a client error', () => {
    expect(redactSecrets('x'.repeat(2000), undefined)).toHaveLength(501);
  });
});

describe('vendorErrorMessage', () => {
  it.each([
    ['{"error":{"message":"Rate limit reached","type":"requests"}}', 'Rate limit reached'],
    ['{"type":"error","error":{"type":"not_found_error","message":"model: claude-x"}}', 'model: claude-x'],
    [
      '{"error":"model \\"llama9\\" not found, try pulling it first"}',
      'model "llama9" not found, try pulling it first',
    ],
    ['{"message":"Bad gateway"}', 'Bad gateway'],
    ['<html>502 Bad Gateway</html>', '<html>502 Bad Gateway</html>'],
  ])('reads %s', (body, message) => {
    expect(vendorErrorMessage(body)).toBe(message);
  });
});

describe('statusFailure', () => {
  it('falls back to the status alone when the vendor said nothing', () => {
    expect(statusFailure('Ollama', { status: 502, vendorMessage: '' }).message).toBe('Ollama answered HTTP 502');
  });
});

describe('redactSecrets: echoes of the configured key in other forms', () => {
  const key = 'local-Secret_123/abc+XYZ';
  it.each([
    ['upper case', key.toUpperCase()],
    ['lower case', key.toLowerCase()],
    ['percent-encoded', encodeURIComponent(key)],
    [
      'percent-encoded in full, lower-case hex',
      [...key].map((character) => `%${character.charCodeAt(0).toString(16)}`).join(''),
    ],
    ['base64', Buffer.from(key).toString('base64')],
    ['base64url', Buffer.from(key).toString('base64url')],
  ])('removes the key %s', (_form, echoed) => {
    const redacted = redactSecrets(`rejected credential ${echoed} for this route`, key);
    expect(redacted).toBe('rejected credential [redacted] for this route');
  });

  it.each([0, 1, 2, 3])('removes the key from inside a longer base64 text, after %i bytes of it', (before) => {
    const credential = Buffer.from(`${'u'.repeat(before)}user:${key}`).toString('base64');
    const redacted = redactSecrets(`Basic ${credential} refused`, key);
    const stable = Buffer.from(key).toString('base64').slice(2, -4);
    expect(redacted).not.toContain(stable);
    expect(redacted).toContain('[redacted]');
  });

  it('leaves text alone that only shares short pieces with the key', () => {
    expect(redactSecrets('local secret abc', key)).toBe('local secret abc');
  });
});

describe('retryAfterMs', () => {
  const headers = (values: Record<string, string>) => (name: string) => values[name];
  it("reads seconds, an HTTP date, and OpenAI's retry-after-ms before either", () => {
    expect(retryAfterMs(headers({ 'retry-after': '7' }))).toBe(7000);
    expect(retryAfterMs(headers({ 'retry-after': '0.5' }))).toBe(500);
    expect(
      retryAfterMs(
        headers({ 'retry-after': 'Tue, 01 Dec 2026 19:00:30 GMT' }),
        Date.parse('Tue, 01 Dec 2026 19:00:00 GMT'),
      ),
    ).toBe(30_000);
    expect(retryAfterMs(headers({ 'retry-after': '7', 'retry-after-ms': '1200' }))).toBe(1200);
  });

  it('is undefined when the header is absent or unreadable', () => {
    expect(retryAfterMs(headers({}))).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': '-3' }))).toBeUndefined();
  });
});
