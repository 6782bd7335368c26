import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { useServer } from '../support/start-server.js';

const fixture = useServer();
const folder = mkdtempSync(join(tmpdir(), 'cpp-tls-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** A self-signed certificate for 127.0.0.1, made with openssl for this test run. */
function selfSignedCertificate(): { cert: Buffer; key: Buffer } {
  const [certFile, keyFile] = [join(folder, 'cert.pem'), join(folder, 'key.pem')];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'ignore' },
  );
  return { cert: readFileSync(certFile), key: readFileSync(keyFile) };
}

describe('TLS', () => {
  it('serves wss:// with the given certificate, verified by a client that trusts it', async () => {
    const tls = selfSignedCertificate();
    const server = await fixture.start({ tls });
    expect(server.url).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/v1\/cpp\/session$/);
    const socket = new WebSocket(server.url, CPP_SUBPROTOCOL, { ca: tls.cert });
    const answer = new Promise<string>((resolve) => socket.once('message', (data) => resolve(String(data))));
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    socket.send(JSON.stringify({ type: 'CPP_THREAD_LIST', timestamp: Date.now(), payload: {} }));
    expect(JSON.parse(await answer)).toMatchObject({ type: 'CPP_THREADS', payload: { threads: [] } });
    socket.close();
  });

  it('names a wss:// audience in its challenges', async () => {
    const tls = selfSignedCertificate();
    const server = await fixture.start({ tls, auth: 'did-key' });
    const socket = new WebSocket(server.url, CPP_SUBPROTOCOL, { ca: tls.cert });
    const data = await new Promise<unknown>((resolve) => socket.once('message', (message) => resolve(message)));
    expect(JSON.parse(String(data)).payload.audience).toBe(server.url);
    socket.close();
  });
});
