import type { IncomingHttpHeaders } from 'node:http';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import { CPPServer } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { ApplicationServer, echoes } from '../support/application-server.js';
import { listThreads } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

let application: ApplicationServer;

afterEach(() => application.close());

/** The HTTP answer to a CPP upgrade, once the server has closed the connection: it is left to the server to close. */
function refusedUpgrade(url: string): Promise<Answer> {
  const socket = new WebSocket(url, CPP_SUBPROTOCOL);
  return new Promise((resolve, reject) => {
    socket.once('open', () => reject(new Error('the upgrade was accepted')));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.socket.once('close', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body }),
      );
    });
  });
}

describe('CPP upgrades on an application server after CPPServer.close()', () => {
  it('are refused with 503 and a reason, the connection closed; the application keeps its upgrades', {
    timeout: 5000,
  }, async () => {
    application = await ApplicationServer.start();
    const { host, http } = application;
    const server = new CPPServer({ server: http });
    await server.ready;
    await server.close();

    const answer = await refusedUpgrade(`ws://${host}${CPP_SESSION_PATH}`);
    expect(answer).toMatchObject({ status: 503, body: 'this CPP server has shut down\n' });
    expect(answer.headers).toMatchObject({ connection: 'close', 'content-type': 'text/plain; charset=utf-8' });
    expect(await echoes(`ws://${host}/echo`)).toBe('ping');
  });

  it('are served again by a CPPServer attached after it', { timeout: 5000 }, async () => {
    application = await ApplicationServer.start();
    const { host, http } = application;
    await new CPPServer({ server: http }).close();
    const next = new CPPServer({ server: http });
    await next.ready;
    try {
      const client = await RawClient.connect(`ws://${host}${CPP_SESSION_PATH}`);
      expect(await listThreads(client)).toEqual([]);
      expect(http.listeners('upgrade')).toHaveLength(2);
    } finally {
      await next.close();
    }
  });
});
