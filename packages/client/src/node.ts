import { CPP_DID_HEADER, CPP_SUBPROTOCOL, decodeServerFrame } from '@promethea/cpp-protocol';
import { readFile as readFileBytes } from 'node:fs/promises';
import { basename } from 'node:path';
import WebSocket from 'ws';
import type { CPPClientOptions } from './client-options.js';
import { CPPClient as CPPClientCore } from './cpp-client.js';
import { OpenFailureSocket } from './open-failure-socket.js';
import { watchUpgrade } from './refused-upgrade.js';
import { sessionUrl } from './session-url.js';

/**
 * The Node client: `ws`, with the DID in the X-Client-Sovereign-DID header as the spec's handshake shows. A socket
 * that fails to open says why: the HTTP status and body of a refused upgrade, or the network error. Every server frame
 * is checked against the protocol's schemas.
 */
export class CPPClient extends CPPClientCore {
  constructor(options: CPPClientOptions) {
    const Socket = options.WebSocket ?? WebSocket;
    const openSocket = (endpoint: string, did: string | undefined) => {
      const headers = did === undefined ? undefined : { headers: { [CPP_DID_HEADER]: did } };
      const socket = new Socket(sessionUrl(endpoint).href, CPP_SUBPROTOCOL, headers);
      return socket instanceof WebSocket ? new OpenFailureSocket(socket, watchUpgrade(socket)) : socket;
    };
    const readFile = async (path: string) => ({ name: basename(path), bytes: await readFileBytes(path) });
    super(options, { openSocket, decodeServerFrame, readFile });
  }
}

export * from './public-api.js';
export { fileIdentity } from './identity/file-identity.js';
