import { findInvariantViolations, type StreamHaltedFrame } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { ENDLESS_ANSWERS, SHORT_ANSWERS, useRealServer } from '../support/real-server.js';
import { mirrorUntil } from '../support/session.js';

describe('CPPClient against the real CPPServer with the demo model', () => {
  const real = useRealServer();

  it('streams a prompt to completion, and the mirror equals a fresh sync', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const client = real.connect(server);
    const deltas: string[] = [];
    const result = await client.prompt({
      userPrompt: 'Explain spiking neural networks.',
      onStream: (delta) => deltas.push(delta),
    });

    expect(result.status).toBe('completed');
    expect(result.finishReason).toBe('stop');
    expect(result.content.split(' ')).toHaveLength(12);
    expect(deltas.join('')).toBe(result.content);
    const fresh = await real.connect(server).openThread(result.threadId);
    expect(client.graph(result.threadId)).toEqual(fresh);
    expect(findInvariantViolations(fresh)).toEqual([]);
  });

  it('pivots mid-stream: the interrupted answer keeps exactly the halted length, the branch streams under it', async () => {
    const server = await real.start(ENDLESS_ANSWERS);
    const client = real.connect(server);
    const halts: StreamHaltedFrame['payload'][] = [];
    client.on('halted', (halted) => halts.push(halted));
    const { threadId } = await client.openThread();
    const first = client.prompt({ userPrompt: 'Explain Clojure.' });
    await mirrorUntil(client, threadId, (mirror) =>
      Object.values(mirror.nodes).some((node) => node.status === 'streaming' && node.content.length > 20),
    );

    const branchText: string[] = [];
    const pivot = client.pivot({ userPrompt: 'Rust instead.', onStream: (delta) => branchText.push(delta) });
    const interrupted = await first;
    expect(interrupted.status).toBe('interrupted');
    expect(halts).toHaveLength(1);
    expect(halts[0]).toMatchObject({ interruptedNodeId: interrupted.assistantNodeId, reason: 'pivot' });
    expect(interrupted.content).toHaveLength(halts[0]!.finalContentLength);

    await mirrorUntil(client, threadId, () => branchText.length > 0);
    await client.stop();
    const branch = await pivot;
    const mirror = client.graph(threadId)!;
    expect(mirror.nodes[interrupted.assistantNodeId]?.childrenIds).toEqual([branch.userNodeId]);
    expect(mirror.nodes[branch.userNodeId]).toMatchObject({
      role: 'user',
      content: 'Rust instead.',
      childrenIds: [branch.assistantNodeId],
    });
    expect(mirror.activeHeadMessageId).toBe(branch.assistantNodeId);
    expect(mirror).toEqual(await real.connect(server).openThread(threadId));
  });

  it('anchors an older answer, and the next prompt branches from it', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const client = real.connect(server);
    const first = await client.prompt({ userPrompt: 'First' });
    const second = await client.prompt({ userPrompt: 'Second' });
    const anchored = await client.anchor(first.assistantNodeId, { expectedVersion: client.graph()!.version });
    expect(anchored.activeHeadMessageId).toBe(first.assistantNodeId);
    const third = await client.prompt({ userPrompt: 'Third' });

    const mirror = client.graph()!;
    expect(mirror.nodes[third.userNodeId]?.parentId).toBe(first.assistantNodeId);
    expect(mirror.nodes[first.assistantNodeId]?.childrenIds).toEqual([second.userNodeId, third.userNodeId]);
    expect(mirror.activeHeadMessageId).toBe(third.assistantNodeId);
    expect(findInvariantViolations(mirror)).toEqual([]);
    const held = structuredClone(mirror);
    expect(await client.requestSync()).toEqual(held);
  });

  it('rejects an anchor with a stale expectedVersion with CONFLICT', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const client = real.connect(server);
    const first = await client.prompt({ userPrompt: 'First' });
    await expect(client.anchor(first.userNodeId, { expectedVersion: 0 })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('gives two clients on one thread identical mirrors, whichever of them acts', async () => {
    const server = await real.start(ENDLESS_ANSWERS);
    const alice = real.connect(server);
    const bob = real.connect(server, 'did:key:z6MkTestClientBob');
    const { threadId } = await alice.openThread();
    await bob.openThread(threadId);

    const asked = alice.prompt({ userPrompt: 'Tell me about trees.' });
    await mirrorUntil(bob, threadId, (graph) => (bob.streamingNode()?.content.length ?? 0) > 20 && graph.version > 0);
    const pivot = bob.pivot({ userPrompt: 'Graphs, rather.' });
    expect((await asked).status).toBe('interrupted');
    await mirrorUntil(alice, threadId, () => (alice.streamingNode()?.content.length ?? 0) > 0);
    await alice.stop();
    const branch = await pivot;

    expect(branch.status).toBe('interrupted');
    await mirrorUntil(alice, threadId, (graph) => graph.version === bob.graph(threadId)!.version);
    expect(alice.graph(threadId)).toEqual(bob.graph(threadId));
    const held = structuredClone(alice.graph(threadId));
    expect(await alice.requestSync(threadId)).toEqual(held);
  });
});
