import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { audienceOf, publicSessionUrl } from '../../src/auth/audience.js';
import { clientAddress } from '../../src/auth/client-address.js';

const request = (headers: Record<string, string>, remoteAddress = '10.0.0.1', url = '/v1/cpp/session?did=x') =>
  ({ headers, url, socket: { remoteAddress } }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  it('is the peer address unless the server trusts a proxy', () => {
    const proxied = request({ 'x-forwarded-for': '198.51.100.7, 203.0.113.9' });
    expect(clientAddress(proxied, false)).toBe('10.0.0.1');
    expect(clientAddress(proxied, true)).toBe('203.0.113.9');
    expect(clientAddress(request({}), true)).toBe('10.0.0.1');
  });
});

describe('the audience', () => {
  const options = { publicUrl: undefined, secure: false, trustProxy: false };

  it('is the session URL at the request Host, wss when the server or a trusted proxy terminates TLS', () => {
    expect(audienceOf(request({ host: 'Chat.Example:8080' }), options)).toBe('ws://chat.example:8080/v1/cpp/session');
    expect(audienceOf(request({ host: 'chat.example' }), { ...options, secure: true })).toBe(
      'wss://chat.example/v1/cpp/session',
    );
    expect(
      audienceOf(request({ host: 'chat.example', 'x-forwarded-proto': 'https' }), { ...options, trustProxy: true }),
    ).toBe('wss://chat.example/v1/cpp/session');
    expect(audienceOf(request({ host: 'chat.example', 'x-forwarded-proto': 'https' }), options)).toBe(
      'ws://chat.example/v1/cpp/session',
    );
  });

  it("is the request's path, without its query, where an application mounted CPP itself (CPPServer.accept)", () => {
    expect(audienceOf(request({ host: 'chat.example' }, '10.0.0.1', '/app/cpp?did=x'), options)).toBe(
      'ws://chat.example/app/cpp',
    );
  });

  it('is the public URL when one is set, whatever the Host', () => {
    expect(
      audienceOf(request({ host: 'evil.example' }), { ...options, publicUrl: 'wss://chat.example/v1/cpp/session' }),
    ).toBe('wss://chat.example/v1/cpp/session');
    expect(publicSessionUrl('https://chat.example')).toBe('wss://chat.example/v1/cpp/session');
  });

  it('is undefined for a Host that cannot be part of a URL', () => {
    expect(audienceOf(request({}), options)).toBeUndefined();
    expect(audienceOf(request({ host: 'a b' }), options)).toBeUndefined();
  });
});
