import { findInvariantViolations, graphFromSync } from '@promethea/cpp-protocol';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { startCliServer, type CliServer } from '../support/cli-server.js';
import { eventually } from '../support/eventually.js';
import { chunksReceived, nextUpdate, openThread, prompt, streamedText } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { temporaryDatabase } from '../support/temporary-database.js';
import { mirrorOf } from '../support/thread-mirror.js';

const cleanups: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function cli(databasePath: string, demoDelayMs = 50): Promise<CliServer> {
  // The demo model at 50 ms a word takes about 6 s for an answer: ample time to crash the server in the middle.
  const server = await startCliServer(['--db', databasePath, '--demo-delay-ms', String(demoDelayMs)]);
  cleanups.push(() => server.kill('SIGKILL'));
  return server;
}

async function connect(url: string): Promise<RawClient> {
  const client = await RawClient.connect(url);
  cleanups.push(async () => {
    await client.close();
    expect(client.invalid).toEqual([]);
  });
  return client;
}

describe('cpp-server killed with SIGKILL mid-stream', () => {
  it('comes back on the same file with the streaming node interrupted at its last persisted batch, and nothing committed lost', {
    timeout: 60_000,
  }, async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    const crashing = await cli(database.path);
    const client = await connect(crashing.url);
    const { threadId } = await openThread(client, { patches: true });
    const first = await prompt(client, threadId, 'First question');
    await chunksReceived(client, first.assistantNodeId, 3);
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: first.assistantNodeId });
    await nextUpdate(client, threadId, (update) => update.nodes[first.assistantNodeId]?.status === 'interrupted');
    const second = await prompt(client, threadId, 'Second question');

    const reader = SqliteStore.open(database.path);
    cleanups.push(() => reader.close());
    const persisted = await eventually(async () => {
      const content = (await reader.loadThread(threadId))?.graph.nodes[second.assistantNodeId]?.content;
      return content ? content : undefined;
    }, 'a batch of the streaming answer persisted');
    expect(await crashing.kill('SIGKILL')).toBe('SIGKILL');
    await client.closed;

    expect(
      client.all('CPP_STREAM_COMPLETED').filter((frame) => frame.payload.nodeId === second.assistantNodeId),
    ).toEqual([]);
    const sent = streamedText(client, second.assistantNodeId);
    const seen = mirrorOf(client.frames, threadId).graph!;

    const restarted = await cli(database.path);
    const recovered = await openThread(await connect(restarted.url), { threadId });
    expect(recovered.version).toBe(seen.version + 1);
    const node = recovered.nodes[second.assistantNodeId]!;
    expect(node.status).toBe('interrupted');
    expect(sent.startsWith(node.content)).toBe(true);
    expect(node.content.startsWith(persisted)).toBe(true);
    for (const [id, committed] of Object.entries(seen.nodes)) {
      if (id !== second.assistantNodeId) expect(recovered.nodes[id]).toEqual(committed);
    }
    expect(Object.keys(recovered.nodes).sort()).toEqual(Object.keys(seen.nodes).sort());
    expect(recovered.activeHeadMessageId).toBe(second.assistantNodeId);
    expect(findInvariantViolations(graphFromSync(recovered))).toEqual([]);

    expect(await restarted.kill('SIGTERM')).toBe(0);
  });

  it('recovers an answer killed while the model reasoned with the reasoning last persisted and no answer', {
    timeout: 60_000,
  }, async () => {
    const database = temporaryDatabase();
    cleanups.push(database.remove);
    // 40 words of reasoning at 200 ms a word: 8 s to crash the server while the model still reasons.
    const crashing = await cli(database.path, 200);
    const client = await connect(crashing.url);
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Think first', { model: 'demo-reasoning' });
    await chunksReceived(client, assistantNodeId, 3, 'reasoning');

    const reader = SqliteStore.open(database.path);
    cleanups.push(() => reader.close());
    const persisted = await eventually(
      async () => (await reader.loadThread(threadId))?.graph.nodes[assistantNodeId]?.reasoning,
      'a batch of the reasoning persisted',
    );
    expect(await crashing.kill('SIGKILL')).toBe('SIGKILL');
    await client.closed;
    const sent = streamedText(client, assistantNodeId, 'reasoning');
    expect(streamedText(client, assistantNodeId)).toBe('');

    const restarted = await cli(database.path);
    const node = (await openThread(await connect(restarted.url), { threadId })).nodes[assistantNodeId]!;
    expect(node).toMatchObject({ status: 'interrupted', content: '', model: 'demo-reasoning' });
    expect(sent.startsWith(node.reasoning!)).toBe(true);
    expect(node.reasoning!.startsWith(persisted)).toBe(true);
    expect(await restarted.kill('SIGTERM')).toBe(0);
  });
});
