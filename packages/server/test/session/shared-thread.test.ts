import { findInvariantViolations, graphFromSync } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import {
  chunksReceived,
  completion,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
} from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { mirrorOf } from '../support/thread-mirror.js';

const fixture = useServer();

const ANSWERS = [
  { chunks: ['Alpha ', 'beta ', 'gamma ', 'delta'] },
  { chunks: ['Second ', 'answer'], gated: false },
  { chunks: ['Third ', 'one ', 'here'] },
];

/** The client's mirror, built from every frame it received before its final sync, checked against that sync. */
async function expectExactMirror(client: RawClient, threadId: string) {
  const finalSync = await requestSync(client, threadId);
  const received = client.frames.slice(
    0,
    client.frames.findIndex((frame) => frame.type === 'CPP_SYNC_GRAPH' && frame.payload === finalSync),
  );
  const mirror = mirrorOf(received, threadId);
  expect(mirror.problems).toEqual([]);
  expect(mirror.graph).toEqual(graphFromSync(finalSync));
  expect(findInvariantViolations(mirror.graph!)).toEqual([]);
  return mirror.graph;
}

describe('two clients on one thread', () => {
  it('hold identical copies of the tree through prompts, a pivot cut shorter than one of them saw, an anchor and a stop', async () => {
    const model = new ScriptedModel((callIndex) => ANSWERS[callIndex]!);
    await fixture.start({ model });
    const [patches, syncs] = [await fixture.connect(), await fixture.connect()];
    const { threadId } = await openThread(patches, { patches: true });
    await openThread(syncs, { threadId });

    const first = await prompt(patches, threadId, 'Greek letters?');
    (await model.call(0)).release(3);
    await chunksReceived(patches, first.assistantNodeId, 3);
    await chunksReceived(syncs, first.assistantNodeId, 3);

    // The other client had shown only "Alpha be" when it pivoted.
    const branch = await pivot(syncs, threadId, first.assistantNodeId, 'Hebrew instead', {
      receivedContentLength: 'Alpha be'.length,
    });
    await completion(patches, threadId, branch.assistantNodeId);
    await completion(syncs, threadId, branch.assistantNodeId);

    patches.send('CPP_ANCHOR_HEAD', { activeThreadId: threadId, targetNodeId: first.userNodeId });
    await nextUpdate(syncs, threadId, (update) => update.activeHeadMessageId === first.userNodeId);
    const third = await prompt(syncs, threadId, 'Numbers then');
    expect(third.update.nodes[third.userNodeId]?.parentId).toBe(first.userNodeId);
    (await model.call(2)).release(2);
    await chunksReceived(patches, third.assistantNodeId, 2);
    patches.send('CPP_STREAM_STOP', {
      activeThreadId: threadId,
      nodeId: third.assistantNodeId,
      receivedContentLength: 'Third o'.length,
    });
    await nextUpdate(syncs, threadId, (update) => update.nodes[third.assistantNodeId]?.status === 'interrupted');

    const seenByPatches = await expectExactMirror(patches, threadId);
    const seenBySyncs = await expectExactMirror(syncs, threadId);
    expect(seenByPatches).toEqual(seenBySyncs);
    expect(seenByPatches?.nodes[first.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Alpha be' });
    expect(seenByPatches?.nodes[third.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Third o' });
    expect(seenByPatches?.activeHeadMessageId).toBe(third.assistantNodeId);
  });
});
