import { describe, expect, it } from 'vitest';
import { redactSecrets, statusFailure } from '../../src/model/provider-error.js';
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
    ['{"error":"model \\"llama9\\" not found, try pulling it first"}', 'model "llama9" not found, try pulling it first'],
    ['{"message":"Bad gateway"}', 'Bad gateway'],
    ['<html>502 Bad Gateway</html>', '<html>502 Bad Gateway</html>'],
  ])('reads %s', (body, message) => {
    expect(vendorErrorMessage(body)).toBe(message);
  });
});

describe('statusFailure', () => {
  it('falls back to the status alone when the vendor said nothing', () => {
    expect(statusFailure('Ollama', 502, '').message).toBe('Ollama answered HTTP 502');
  });
});
