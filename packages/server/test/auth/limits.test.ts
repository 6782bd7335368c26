import { once } from 'node:events';
import { connect } from 'node:net';
import { CloseCode, newMessageId, type ErrorFrame, type StreamCompletedFrame } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { completion, expectError, listThreads, openThread, prompt, requestSync } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { challengeOf, connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';
import { ScriptedModel } from '../support/scripted-model.js';

const fixture = useServer();

describe('the prompt length limit', () => {
  it('is RATE_LIMITED past maxPromptLength code units, for prompts and pivots alike', async () => {
    await fixture.start({ limits: { maxPromptLength: 10 } });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'x'.repeat(11), newNodeId: newMessageId() },
      { id: 'long' },
    );
    expect((await expectError(client, 'RATE_LIMITED', { refId: 'long' })).message).toMatch(/limit is 10/);
    const exchange = await prompt(client, threadId, '🚀'.repeat(5));
    client.send(
      'CPP_PIVOT_INIT',
      {
        activeThreadId: threadId,
        interruptedNodeId: exchange.assistantNodeId,
        userPrompt: 'y'.repeat(11),
        newBranchNodeId: newMessageId(),
      },
      { id: 'long-pivot' },
    );
    await expectError(client, 'RATE_LIMITED', { refId: 'long-pivot' });
  });
});

describe('the frame rate limit', () => {
  it('drops frames past the burst with RATE_LIMITED, and closes with 4429 a client that keeps on', async () => {
    // One token every 100 s: no frame of this test can be paid for by time passing.
    await fixture.start({ limits: { framesPerSecond: 0.01, frameBurst: 2 } });
    const client = await fixture.connect();
    for (let index = 0; index < 6; index += 1) client.send('CPP_THREAD_LIST', {}, { id: `list-${index}` });
    expect(await client.closed).toBe(CloseCode.TOO_MANY_REQUESTS);
    expect(client.closeReason).toBe('too many frames');
    // Frames 1 and 2 are taken; 3 is dropped and answered at once, 4 dropped and counted for the report a second
    // later, and 5 ends the connection, the drops past a burst (whose answers to 1 and 2 may not have left by then).
    expect(client.all('CPP_ERROR').map((frame) => frame.payload.code)).toEqual(['RATE_LIMITED']);
  });
});

describe('the connection limits', () => {
  it('refuses with HTTP 429 a connection past maxConnectionsPerIp, and counts a closed one out', async () => {
    const server = await fixture.start({ limits: { maxConnectionsPerIp: 2 } });
    const first = await fixture.connect();
    await fixture.connect();
    expect((await RawClient.refusal(server.url)).status).toBe(429);
    await first.close();
    await listThreads(await fixture.connect());
  });

  it('closes at once a TCP connection past maxSocketsPerIp, before any request, and counts a closed one out', async () => {
    const server = await fixture.start({ limits: { maxSocketsPerIp: 2 } });
    const idle = [connect(server.port, '127.0.0.1'), connect(server.port, '127.0.0.1')];
    await Promise.all(idle.map((socket) => once(socket, 'connect')));
    for (const socket of idle) socket.on('error', () => undefined);
    const third = connect(server.port, '127.0.0.1');
    // Reset by the server (ECONNRESET): `once` would reject on that error, so the close is awaited by hand.
    third.on('error', () => undefined);
    const closed = new Promise((resolve) => third.on('close', resolve));
    let answer = '';
    third.on('data', (data: Buffer) => (answer += data.toString()));
    third.write('GET /v1/cpp/session HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await closed;
    expect(answer).toBe('');
    // Ended from this side, the socket closes here once the server has closed its own side, and counted it out.
    idle[0]!.end();
    await once(idle[0]!, 'close');
    await listThreads(await fixture.connect());
    idle[1]!.destroy();
  });

  it('keeps answering 429 to upgrades past maxConnectionsPerIp while the TCP count, set higher, has room', async () => {
    const server = await fixture.start({ limits: { maxConnectionsPerIp: 1, maxSocketsPerIp: 3 } });
    await fixture.connect();
    expect((await RawClient.refusal(server.url)).status).toBe(429);
    expect((await RawClient.refusal(server.url)).status).toBe(429);
  });

  it('closes with RATE_LIMITED and 4429 a connection past maxConnectionsPerDid, and counts a closed one out', async () => {
    await fixture.start({ limits: { maxConnectionsPerDid: 1 } });
    const first = await fixture.connect({ did: 'did:key:zAlice' });
    const anotherDid = await fixture.connect({ did: 'did:key:zBob' });
    const second = await fixture.connect({ did: 'did:key:zAlice' });
    await expectError(second, 'RATE_LIMITED');
    expect(await second.closed).toBe(CloseCode.TOO_MANY_REQUESTS);
    expect(second.closeReason).toBe('too many connections for this DID');
    await listThreads(anotherDid);
    await first.close();
    await listThreads(await fixture.connect({ did: 'did:key:zAlice' }));
  });
});

describe('the connection limit per DID, with proven identities', () => {
  it('counts a connection once its proof is in, and refuses the one past the limit instead of accepting it', async () => {
    await fixture.start({ auth: 'did-key', limits: { maxConnectionsPerDid: 1 } });
    const alice = TestIdentity.generate();
    await connectAs(fixture, alice);
    const second = await fixture.connect();
    const challenge = await challengeOf(second);
    second.send('CPP_AUTH_PROOF', {
      did: alice.did,
      nonce: challenge.nonce,
      signature: alice.signChallenge(challenge),
    });
    await expectError(second, 'RATE_LIMITED');
    expect(await second.closed).toBe(CloseCode.TOO_MANY_REQUESTS);
    expect(second.all('CPP_AUTH_ACCEPTED')).toEqual([]);
  });
});

describe('the thread and node limits', () => {
  it("refuses with RATE_LIMITED a thread past maxThreadsPerDid, and still opens the DID's own", async () => {
    await fixture.start({ limits: { maxThreadsPerDid: 2 } });
    const client = await fixture.connect({ did: 'did:key:zAlice' });
    const { threadId } = await openThread(client);
    await openThread(client, { threadId: 'thread_second' });
    client.send('CPP_THREAD_OPEN', {}, { id: 'third' });
    await expectError(client, 'RATE_LIMITED', { refId: 'third' });
    client.send('CPP_THREAD_OPEN', { threadId: 'thread_third' }, { id: 'third-named' });
    await expectError(client, 'RATE_LIMITED', { refId: 'third-named' });
    expect((await openThread(client, { threadId })).threadId).toBe(threadId);
    await openThread(await fixture.connect({ did: 'did:key:zBob' }));
  });

  it('refuses with RATE_LIMITED a prompt past maxNodesPerThread, but answers its exact retry', async () => {
    await fixture.start({ limits: { maxNodesPerThread: 4 } });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    await completion(client, threadId, (await prompt(client, threadId, 'one')).assistantNodeId);
    const second = await prompt(client, threadId, 'two');
    await completion(client, threadId, second.assistantNodeId);
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'three', newNodeId: newMessageId() },
      { id: 'full' },
    );
    expect((await expectError(client, 'RATE_LIMITED', { refId: 'full' })).message).toMatch(/full/);
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'two', newNodeId: second.userNodeId },
      { id: 'retry' },
    );
    expect(Object.keys((await client.next('CPP_SYNC_GRAPH')).payload.nodes)).toHaveLength(4);
    expect(Object.keys((await requestSync(client, threadId)).nodes)).toHaveLength(4);
  });
});

describe('the thread byte limit', () => {
  it("refuses with RATE_LIMITED a prompt or pivot that would take the thread's text past maxThreadBytes, counted in UTF-8", async () => {
    await fixture.start({
      model: new ScriptedModel({ chunks: ['ok'] }, { gated: false }),
      limits: { maxThreadBytes: 40 },
    });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    // 32 bytes in 8 code units, and the answer's 2.
    const first = await prompt(client, threadId, '🚀'.repeat(8));
    await completion(client, threadId, first.assistantNodeId);
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'seven b', newNodeId: newMessageId() },
      { id: 'over' },
    );
    expect((await expectError(client, 'RATE_LIMITED', { refId: 'over' })).message).toMatch(/40 bytes/);
    client.send(
      'CPP_PIVOT_INIT',
      {
        activeThreadId: threadId,
        interruptedNodeId: first.assistantNodeId,
        userPrompt: 'seven b',
        newBranchNodeId: newMessageId(),
      },
      { id: 'over-pivot' },
    );
    await expectError(client, 'RATE_LIMITED', { refId: 'over-pivot' });
    await completion(client, threadId, (await prompt(client, threadId, 'six b!')).assistantNodeId);
  });

  it('refuses with RATE_LIMITED a CPP_CONTINUE of a thread whose text is at maxThreadBytes', async () => {
    const model = new ScriptedModel(
      { chunks: ['0123456789'], ending: new Error('the provider broke off') },
      { gated: false },
    );
    await fixture.start({ model, limits: { maxThreadBytes: 20 } });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    // 10 bytes of prompt and 10 of a failed answer: the thread is full, and a continuation would add to it.
    const { assistantNodeId } = await prompt(client, threadId, 'ten bytes!');
    await expectError(client, 'PROVIDER_ERROR');
    client.send('CPP_CONTINUE', { activeThreadId: threadId, nodeId: assistantNodeId }, { id: 'more' });
    expect((await expectError(client, 'RATE_LIMITED', { refId: 'more' })).message).toMatch(/20 bytes/);
  });

  it('counts text as a sync carries it, JSON-escaped: a thread of control characters at the limit syncs within it', async () => {
    const maxThreadBytes = 6000;
    await fixture.start({ model: new ScriptedModel({ chunks: ['ok'] }, { gated: false }), limits: { maxThreadBytes } });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    // 500 code units, 500 bytes of UTF-8, 3000 bytes in JSON (each \u0001 is 6): the second would pass 6000.
    let refused = false;
    for (let count = 0; count < 12 && !refused; count += 1) {
      const id = `fill-${count}`;
      client.send(
        'CPP_PROMPT',
        { activeThreadId: threadId, userPrompt: '\u0001'.repeat(500), newNodeId: newMessageId() },
        { id },
      );
      const answer = await client.nextMatching(
        (frame): frame is ErrorFrame | StreamCompletedFrame =>
          (frame.type === 'CPP_ERROR' && frame.payload.refId === id) || frame.type === 'CPP_STREAM_COMPLETED',
        `answer to ${id}`,
      );
      refused = answer.type === 'CPP_ERROR';
      if (answer.type === 'CPP_ERROR') expect(answer.payload.code).toBe('RATE_LIMITED');
    }
    expect(refused).toBe(true);
    client.send('CPP_SYNC_REQUEST', { threadId });
    const sync = await client.next(
      'CPP_SYNC_GRAPH',
      (frame) => frame.payload.threadId === threadId && Object.keys(frame.payload.nodes).length > 0,
    );
    const nodes = Object.keys(sync.payload.nodes).length;
    // What a sync weighs beyond its text: about 250 bytes of ids, status and times per node.
    expect(Buffer.byteLength(JSON.stringify(sync))).toBeLessThan(maxThreadBytes + 400 * nodes + 400);
  });
});

describe('the sync allowance', () => {
  it("refuses with RATE_LIMITED the syncs of one DID past syncsPerMinute, over all its connections, and not another DID's", async () => {
    await fixture.start({ limits: { syncsPerMinute: 3 } });
    const [first, second] = [
      await fixture.connect({ did: 'did:key:zAlice' }),
      await fixture.connect({ did: 'did:key:zAlice' }),
    ];
    const { threadId } = await openThread(first);
    await requestSync(first, threadId);
    await openThread(second, { threadId });
    second.send('CPP_SYNC_REQUEST', { threadId }, { id: 'fourth' });
    expect((await expectError(second, 'RATE_LIMITED', { refId: 'fourth' })).message).toMatch(/3 per minute/);
    first.send('CPP_THREAD_OPEN', { threadId }, { id: 'fifth' });
    await expectError(first, 'RATE_LIMITED', { refId: 'fifth' });
    await openThread(await fixture.connect({ did: 'did:key:zBob' }));
  });
});

describe('the search allowance', () => {
  it("refuses with RATE_LIMITED the searches of one DID past searchesPerMinute, over all its connections, and not another DID's", async () => {
    await fixture.start({ limits: { searchesPerMinute: 2 } });
    const [first, second] = [
      await fixture.connect({ did: 'did:key:zAlice' }),
      await fixture.connect({ did: 'did:key:zAlice' }),
    ];
    const search = (client: RawClient, id: string) => client.send('CPP_THREAD_SEARCH', { query: 'pivot' }, { id });
    search(first, 'first');
    await first.next('CPP_SEARCH_RESULTS');
    search(second, 'second');
    await second.next('CPP_SEARCH_RESULTS');
    search(second, 'third');
    expect((await expectError(second, 'RATE_LIMITED', { refId: 'third' })).message).toBe(
      'too many searches: the limit is 2 per minute',
    );
    search(first, 'fourth');
    await expectError(first, 'RATE_LIMITED', { refId: 'fourth' });
    const bob = await fixture.connect({ did: 'did:key:zBob' });
    search(bob, 'bob');
    expect((await bob.next('CPP_SEARCH_RESULTS')).payload).toEqual({ query: 'pivot', hits: [] });
  });
});

describe('the timeouts', () => {
  it('answers HTTP 408 to an upgrade request that does not arrive whole in time', async () => {
    const server = await fixture.start({ limits: { handshakeTimeoutMs: 100 } });
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /v1/cpp/session HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n');
    let answer = '';
    socket.on('data', (data: Buffer) => (answer += data.toString()));
    await once(socket, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('closes with 4408 a connection that sends nothing for idleTimeoutMs', async () => {
    await fixture.start({ limits: { idleTimeoutMs: 100 } });
    const client = await fixture.connect();
    expect(await client.closed).toBe(CloseCode.TIMEOUT);
    expect(client.closeReason).toBe('idle for too long');
  });
});
