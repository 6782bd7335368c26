import { CPPClient, DidKeyIdentity, type CPPClientOptions, type DidSigner } from '@promethea/cpp-client';
import { DemoProvider, type CPPServer, type CPPServerOptions } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { TcpProxy } from '../support/tcp-proxy.js';

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A did-key server, and the DIDs it saw proven. */
async function startProvingServer(options: CPPServerOptions = {}): Promise<{ server: CPPServer; proven: string[] }> {
  const server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 12 }), auth: 'did-key', ...options });
  cleanups.push(() => server.close());
  const proven: string[] = [];
  server.on('authenticated', ({ identity }) => proven.push(identity.did));
  return { server, proven };
}

function connect(endpoint: string, options: Partial<CPPClientOptions> = {}): CPPClient {
  const client = new CPPClient({ endpoint, reconnect: false, ...options });
  cleanups.push(() => client.close());
  return client;
}

describe('a client with an identity', () => {
  it('proves it to a did-key server and acts as it', async () => {
    const { server, proven } = await startProvingServer();
    const alice = await DidKeyIdentity.generate();
    const client = connect(server.url, { identity: alice });
    const { threadId } = await client.openThread();
    expect((await client.prompt({ userPrompt: 'Explain spiking neural networks.' })).status).toBe('completed');
    expect((await client.listThreads()).map((thread) => thread.threadId)).toEqual([threadId]);
    expect(proven).toEqual([alice.did]);
  });

  it('takes a private key, or any signer, sync or async', async () => {
    const { server, proven } = await startProvingServer();
    const { privateKey: key } = await (await DidKeyIdentity.generate({ extractable: true })).toStored();
    await connect(server.url, { identity: key }).listThreads();
    const wallet = await DidKeyIdentity.generate();
    const asyncSigner: DidSigner = { did: wallet.did, sign: async (message) => wallet.sign(message) };
    await connect(server.url, { identity: asyncSigner }).listThreads();
    expect(proven).toEqual([(await DidKeyIdentity.fromPrivateKey(key)).did, wallet.did]);
  });

  it('waits for an identity given as a promise before it connects, and proves it', async () => {
    const { server, proven } = await startProvingServer();
    let load!: (identity: DidKeyIdentity) => void;
    const loading = new Promise<DidKeyIdentity>((resolve) => (load = resolve));
    const client = connect(server.url, { identity: loading });
    const listed = client.listThreads();
    expect(client.status).toBe('connecting');
    const alice = await DidKeyIdentity.generate();
    load(alice);
    await listed;
    expect(proven).toEqual([alice.did]);
  });

  it('fails to connect, saying why, when its identity does not load or is not the DID it claims', async () => {
    const { server, proven } = await startProvingServer();
    const broken = connect(server.url, { identity: Promise.reject(new Error('IndexedDB is blocked')) });
    await expect(broken.ready()).rejects.toMatchObject({
      code: 1006,
      reason: 'the identity could not be loaded: IndexedDB is blocked',
    });
    const claiming = connect(server.url, { identity: DidKeyIdentity.generate(), did: 'did:key:z6MkSomeoneElse' });
    await expect(claiming.ready()).rejects.toMatchObject({
      code: 1006,
      reason: expect.stringMatching(/^the identity could not be loaded: options.did .* is not the identity's DID/),
    });
    expect(proven).toEqual([]);
  });

  it("cannot open another identity's thread: FORBIDDEN", async () => {
    const { server } = await startProvingServer();
    const { threadId } = await connect(server.url, { identity: await DidKeyIdentity.generate() }).openThread();
    const intruder = connect(server.url, { identity: await DidKeyIdentity.generate() });
    await expect(intruder.openThread(threadId)).rejects.toMatchObject({ code: 'FORBIDDEN' });
  });

  it('proves itself to a server that takes claims too', async () => {
    const { server, proven } = await startProvingServer({ auth: 'claimed' });
    const alice = await DidKeyIdentity.generate();
    await connect(server.url, { identity: alice }).openThread();
    expect(proven).toEqual([alice.did]);
  });

  it('refuses to sign a challenge for another endpoint, and closes with 1008', async () => {
    const { server, proven } = await startProvingServer({ publicUrl: 'wss://elsewhere.example' });
    const client = connect(server.url, { identity: await DidKeyIdentity.generate() });
    await expect(client.ready()).rejects.toMatchObject({ code: 1008, reason: 'the challenge is for another endpoint' });
    expect(proven).toEqual([]);
  });

  it('is closed for good with 4401 when its proof is refused, and hears why', async () => {
    const { server } = await startProvingServer();
    const impostor: DidSigner = {
      did: (await DidKeyIdentity.generate()).did,
      sign: async (message) => (await DidKeyIdentity.generate()).sign(message),
    };
    const client = connect(server.url, { identity: impostor, reconnect: true });
    const errors: string[] = [];
    client.on('error', (error) => errors.push(`${error.code}: ${error.message}`));
    await expect(client.ready()).rejects.toMatchObject({ code: 4401 });
    expect(client.status).toBe('closed');
    expect(errors).toEqual([expect.stringMatching(/^UNAUTHORIZED: the signature is not/)]);
  });

  it('authenticates again on every reconnect, then resumes its threads', async () => {
    const { server, proven } = await startProvingServer({ model: new DemoProvider({ delayMs: 2, words: 150 }) });
    const proxy = await TcpProxy.start(server.port);
    cleanups.push(() => proxy.close());
    const alice = await DidKeyIdentity.generate();
    const client = connect(`ws://127.0.0.1:${proxy.port}`, {
      identity: alice,
      reconnect: { initialDelayMs: 5, maxDelayMs: 20 },
    });
    await client.openThread();
    let cut = false;
    client.on('chunk', () => {
      if (!cut) cut = proxy.cutOne();
    });
    const result = await client.prompt({ userPrompt: 'A long answer, please.' });
    expect(result.status).toBe('completed');
    expect(proven).toEqual([alice.did, alice.did]);
    expect((await client.listThreads())[0]?.nodeCount).toBe(2);
  });
});

describe('a client without an identity', () => {
  it('is refused by a did-key server with UNAUTHORIZED', async () => {
    const { server } = await startProvingServer();
    await expect(connect(server.url).listThreads()).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it("may not claim a DID other than its identity's", async () => {
    const identity = await DidKeyIdentity.generate();
    expect(() => new CPPClient({ endpoint: 'ws://127.0.0.1:1', identity, did: 'did:key:z6MkSomeoneElse' })).toThrow(
      /not the identity's DID/,
    );
  });
});
