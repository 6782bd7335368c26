import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import { CPP_SUBPROTOCOL, CloseCode } from '@promethea/cpp-protocol';
import {
  CPPServer,
  DemoProvider,
  MemoryStore,
  UpgradeRefusal,
  type CPPServerOptions,
  type HostedSocket,
  type SocketHandlers,
} from '@promethea/cpp-server';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { UNPROVEN_MAX_MESSAGE_BYTES } from '../../src/auth/connection-guard.js';
import { authenticate, challengeOf } from '../auth/support/authenticate.js';
import { TestIdentity } from '../auth/support/did-key-identity.js';
import { eventually } from '../support/eventually.js';
import { completion, listThreads, openThread, prompt } from '../support/protocol-steps.js';
import { RawClient, type ConnectOptions } from '../support/raw-client.js';

/** CPP mounted on a path of the application's choosing, not the session path: the host decides where. */
const PATH = '/chat/cpp';

interface Host {
  cpp: CPPServer;
  /** The URL of the path the application serves CPP on. */
  url: string;
  /** The upgrade requests the application handed to `accept`, in order. */
  requests: IncomingMessage[];
  close(): Promise<void>;
}

let host: Host | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  expect(clients.flatMap((client) => client.invalid)).toEqual([]);
  await host?.close();
  host = undefined;
});

function cppServer(options: CPPServerOptions): CPPServer {
  return new CPPServer({
    noServer: true,
    model: new DemoProvider({ delayMs: 5, words: 20 }),
    chunkIntervalMs: 0,
    ...options,
  });
}

/** Selects CPP's subprotocol when offered, as the host must. */
function handleProtocols(offered: Set<string>): string | false {
  return offered.has(CPP_SUBPROTOCOL) ? CPP_SUBPROTOCOL : false;
}

/** An application's own HTTP server with a `ws` server of its own (`noServer`) that hands CPP's path to `accept`. */
async function hostOnWs(options: CPPServerOptions = {}, { ready = true } = {}): Promise<Host> {
  const cpp = cppServer(options);
  const sockets = new WebSocketServer({ noServer: true, handleProtocols });
  const requests: IncomingMessage[] = [];
  const http: Server = createServer((_request, response) => response.end('the application'));
  http.on('upgrade', (request, socket, head) => {
    if (new URL(request.url ?? '/', 'http://localhost').pathname !== PATH) return socket.destroy();
    sockets.handleUpgrade(request, socket, head, (webSocket) => {
      requests.push(request);
      cpp.accept(webSocket, request);
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  if (ready) await cpp.ready;
  return {
    cpp,
    url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}${PATH}`,
    requests,
    async close() {
      await cpp.close();
      sockets.close();
      http.closeAllConnections();
      http.close();
      await once(http, 'close');
    },
  };
}

/**
 * An application whose WebSocket library is not one CPP adapts (uWebSockets.js, say), played here by `ws` seen only
 * through `HostedSocket`: it hands each socket to `open`, holds what arrives until `open` answers, then feeds the
 * session's handlers, as such an application would.
 */
async function hostOnAnotherLibrary(options: CPPServerOptions = {}): Promise<Host> {
  const cpp = cppServer(options);
  const sockets = new WebSocketServer({ noServer: true, handleProtocols });
  const requests: IncomingMessage[] = [];
  const http: Server = createServer((_request, response) => response.end('the application'));
  http.on('upgrade', (request, socket, head) => {
    sockets.handleUpgrade(request, socket, head, (webSocket) => {
      requests.push(request);
      const held: string[] = [];
      let handlers: SocketHandlers | undefined;
      webSocket.on('message', (data) => {
        const text = String(data);
        if (handlers) handlers.onMessage(text, Buffer.byteLength(text));
        else held.push(text);
      });
      webSocket.on('close', () => handlers?.onClose());
      const hosted: HostedSocket = {
        protocol: webSocket.protocol,
        send: (text, written) => webSocket.send(text, () => written?.()),
        close: (code, reason) => webSocket.close(code, reason),
        terminate: () => webSocket.terminate(),
        // Its library limits messages per server only: the session refuses larger frames once read.
        limitMessageBytes: () => undefined,
        get bufferedAmount() {
          return webSocket.bufferedAmount;
        },
      };
      void cpp.open(hosted, request).then((opened) => {
        handlers = opened;
        for (const text of held.splice(0)) opened?.onMessage(text, Buffer.byteLength(text));
        if (webSocket.readyState !== webSocket.OPEN) opened?.onClose();
      });
    });
  });
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  await cpp.ready;
  return {
    cpp,
    url: `ws://127.0.0.1:${(http.address() as AddressInfo).port}${PATH}`,
    requests,
    async close() {
      await cpp.close();
      sockets.close();
      http.closeAllConnections();
      http.close();
      await once(http, 'close');
    },
  };
}

/** A Fastify application serving CPP through `@fastify/websocket`. */
async function hostOnFastify(options: CPPServerOptions = {}): Promise<Host> {
  const cpp = cppServer(options);
  const requests: IncomingMessage[] = [];
  const app: FastifyInstance = Fastify();
  await app.register(websocket, { options: { handleProtocols } });
  app.get(PATH, { websocket: true }, (socket, request) => {
    requests.push(request.raw);
    cpp.accept(socket, request.raw);
  });
  app.get('/', async () => 'the application');
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  await cpp.ready;
  return {
    cpp,
    url: `${address.replace('http', 'ws')}${PATH}`,
    requests,
    async close() {
      await cpp.close();
      await app.close();
    },
  };
}

async function connect(url: string, options: ConnectOptions = {}): Promise<RawClient> {
  const client = await RawClient.connect(url, options);
  clients.push(client);
  return client;
}

/** A connection the server is expected to close at once: its close code and reason. */
async function closedWith(url: string, options: ConnectOptions = {}): Promise<[number, string | undefined]> {
  const client = await connect(url, options);
  return [await client.closed, client.closeReason];
}

const hosts = {
  'accept from a ws server with noServer': hostOnWs,
  'accept from Fastify with @fastify/websocket': hostOnFastify,
  'open from another WebSocket library': hostOnAnotherLibrary,
};

describe.each(Object.entries(hosts))('CPPServer: %s', (_name, start) => {
  it('serves CPP on the application’s path: a thread opened, an answer streamed and completed', async () => {
    host = await start();
    const client = await connect(host.url);
    expect(client.protocol).toBe(CPP_SUBPROTOCOL);
    const { threadId } = await openThread(client);
    const { assistantNodeId } = await prompt(client, threadId, 'Hello from inside another server');
    expect((await completion(client, threadId, assistantNodeId)).completed.nodeId).toBe(assistantNodeId);
    expect(host.cpp.connectionCount).toBe(1);
  });

  it('asks for a did:key proof as its own upgrades do, naming the application’s URL as the audience', async () => {
    host = await start({ auth: 'did-key' });
    const alice = TestIdentity.generate();
    const client = await connect(host.url);
    const challenge = await challengeOf(client);
    expect(challenge.audience).toBe(host.url);
    client.send('CPP_THREAD_LIST', {}, { id: 'early' });
    expect((await client.next('CPP_ERROR')).payload).toMatchObject({ code: 'UNAUTHORIZED', refId: 'early' });
    await authenticate(client, alice, challenge);
    const { threadId } = await openThread(client);
    expect((await listThreads(client)).map((thread) => thread.threadId)).toEqual([threadId]);
  });

  it('refuses with 4000 + the status an upgrade of its own would get', async () => {
    host = await start({ allowedOrigins: ['https://chat.example'], limits: { maxConnectionsPerIp: 1 } });
    expect(await closedWith(host.url, { origin: 'https://evil.example' })).toEqual([
      CloseCode.FORBIDDEN,
      'pages of https://evil.example may not open CPP sessions here',
    ]);
    expect(await closedWith(host.url, { did: 'not a did' })).toEqual([
      4400,
      'X-Client-Sovereign-DID must be a DID (did:<method>:<id>, at most 256 characters)',
    ]);
    const first = await connect(host.url);
    const [code, reason] = await closedWith(host.url);
    expect([code, reason]).toEqual([
      CloseCode.TOO_MANY_REQUESTS,
      'too many connections from 127.0.0.1; the limit is 1',
    ]);
    // The first connection was counted and is served; the refused ones were not counted.
    expect((await openThread(first)).version).toBe(0);
  });
});

describe('CPPServer.accept', () => {
  it('closes with 4400 a WebSocket whose upgrade did not select the CPP subprotocol', async () => {
    host = await hostOnWs();
    expect(await closedWith(host.url, { protocols: [] })).toEqual([
      4400,
      `CPP requires the WebSocket subprotocol ${CPP_SUBPROTOCOL}`,
    ]);
  });

  it("answers a custom verifier's refusal with 4000 + its status, and its failure with 4500", async () => {
    host = await hostOnWs({
      auth: (request) => {
        const token = new URL(request.url ?? '/', 'http://localhost').searchParams.get('token');
        if (token === 'fail') throw new Error('the session store is down');
        return token === 'alice'
          ? { did: 'did:web:alice.example', verified: true }
          : new UpgradeRefusal(401, 'unknown token');
      },
    });
    expect(await closedWith(`${host.url}?token=forged`)).toEqual([CloseCode.UNAUTHORIZED, 'unknown token']);
    expect(await closedWith(`${host.url}?token=fail`)).toEqual([
      CloseCode.INTERNAL_ERROR,
      'the server could not decide who is connecting',
    ]);
    const alice = await connect(`${host.url}?token=alice`);
    expect((await openThread(alice)).version).toBe(0);
  });

  it('keeps frames sent before a slow verifier decided, and handles them once it has', async () => {
    let decide: (() => void) | undefined;
    const decided = new Promise<void>((resolve) => (decide = resolve));
    host = await hostOnWs({
      auth: async () => {
        await decided;
        return { did: 'did:web:alice.example', verified: true };
      },
    });
    const client = await connect(host.url);
    client.send('CPP_THREAD_LIST', {}, { id: 'first' });
    // The frame has reached the server, which holds it unread while the verifier decides.
    await eventually(() => ((host?.requests[0]?.socket.readableLength ?? 0) > 0 ? true : undefined), 'the frame held');
    decide?.();
    expect((await client.next('CPP_THREADS')).payload.threads).toEqual([]);
    expect(client.all('CPP_ERROR')).toEqual([]);
  });

  it('reads at most 4 KiB per message while a proof is awaited, then the server’s own limit again', async () => {
    host = await hostOnWs({ auth: 'did-key', maxFrameBytes: 16 * 1024 });
    const waiting = await connect(host.url);
    await challengeOf(waiting);
    waiting.sendRaw('x'.repeat(UNPROVEN_MAX_MESSAGE_BYTES + 1));
    expect(await waiting.closed).toBe(CloseCode.MESSAGE_TOO_BIG);

    const proven = await connect(host.url);
    await authenticate(proven, TestIdentity.generate());
    // The application's ws server would take 100 MiB; the CPP server's hard limit, 8 × its frame limit, applies.
    proven.sendRaw('x'.repeat(8 * 16 * 1024 + 1));
    expect(await proven.closed).toBe(CloseCode.MESSAGE_TOO_BIG);
  });

  it('holds a WebSocket accepted before the server is ready, and serves it once it is', async () => {
    let recovered: (() => void) | undefined;
    const recovery = new Promise<void>((resolve) => (recovered = resolve));
    /** Crash recovery that takes its time: the server is not ready until it is done. */
    class SlowRecovery extends MemoryStore {
      override async interruptStreamingNodes(now: number): Promise<string[]> {
        await recovery;
        return super.interruptStreamingNodes(now);
      }
    }
    host = await hostOnWs({ store: new SlowRecovery() }, { ready: false });
    const client = await connect(host.url);
    client.send('CPP_THREAD_LIST', {});
    await eventually(() => ((host?.requests[0]?.socket.readableLength ?? 0) > 0 ? true : undefined), 'the frame held');
    recovered?.();
    expect((await client.next('CPP_THREADS')).payload.threads).toEqual([]);
  });

  it('closes with 4408 a message that does not arrive whole within the server’s message timeout', async () => {
    host = await hostOnWs({ limits: { messageTimeoutMs: 200 } });
    const client = await connect(host.url);
    await listThreads(client);
    // A masked text frame announcing 1 MiB (64-bit length), followed by its mask and 1 KiB of payload only.
    const header = Buffer.from([0x81, 0xff, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3, 4]);
    (client.socket as unknown as { _socket: { write(data: Buffer): void } })._socket.write(
      Buffer.concat([header, Buffer.alloc(1024, 0x20)]),
    );
    expect(await client.closed).toBe(CloseCode.TIMEOUT);
    expect(client.closeReason).toBe('a message took too long to arrive');
  });

  it('closes with 1001 once the server has closed: the open connections, then every new one', async () => {
    host = await hostOnWs();
    const client = await connect(host.url);
    await host.cpp.close();
    expect(await client.closed).toBe(CloseCode.GOING_AWAY);
    expect(await closedWith(host.url)).toEqual([CloseCode.GOING_AWAY, 'this CPP server has shut down']);
  });
});
