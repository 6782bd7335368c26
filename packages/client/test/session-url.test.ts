import { describe, expect, it } from 'vitest';
import { sessionUrl } from '../src/session-url.js';

describe('sessionUrl', () => {
  it('adds the session path to an endpoint without one', () => {
    expect(sessionUrl('ws://localhost:8080').href).toBe('ws://localhost:8080/v1/cpp/session');
  });

  it('turns http(s) into ws(s)', () => {
    expect(sessionUrl('http://localhost:8080').href).toBe('ws://localhost:8080/v1/cpp/session');
    expect(sessionUrl('https://example.org/v1/cpp/session').href).toBe('wss://example.org/v1/cpp/session');
  });

  it('keeps an explicit path and query', () => {
    expect(sessionUrl('wss://example.org/proxy/cpp?x=1').href).toBe('wss://example.org/proxy/cpp?x=1');
  });
});
