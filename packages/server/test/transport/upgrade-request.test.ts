import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { CPPServer } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { listThreads } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';

// A full collection on demand: a context made after the flag is set sees `gc`.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

describe('the ws transport', () => {
  it('lets the upgrade request go once the connection is open: an idle connection costs no request', async () => {
    const http = createServer();
    let request: WeakRef<IncomingMessage> | undefined;
    http.on('upgrade', (upgrade: IncomingMessage) => (request = new WeakRef(upgrade)));
    const server = new CPPServer({ server: http });
    await server.ready;
    http.listen(0, '127.0.0.1');
    await once(http, 'listening');
    const client = await RawClient.connect(`ws://127.0.0.1:${(http.address() as AddressInfo).port}/v1/cpp/session`);
    try {
      expect(await listThreads(client)).toEqual([]);
      // A WeakRef holds its target until the turn that made it is over.
      await nextTurn();
      collectGarbage();
      expect(request?.deref()).toBeUndefined();
      expect(await listThreads(client)).toEqual([]);
    } finally {
      await server.close();
      http.close();
    }
  });
});
