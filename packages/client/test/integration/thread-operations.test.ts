import { readFileSync } from 'node:fs';
import { CPPServerError, ThreadClosedError } from '@promethea/cpp-client';
import { ThreadExportSchema } from '@promethea/cpp-protocol';
import { describe, expect, it } from 'vitest';
import { ENDLESS_ANSWERS, SHORT_ANSWERS, useRealServer } from '../support/real-server.js';
import { mirrorUntil } from '../support/session.js';

const chatGptExport = (): unknown =>
  JSON.parse(
    readFileSync(new URL('../../../protocol/test/fixtures/chatgpt-conversations.json', import.meta.url), 'utf8'),
  );

describe('CPPClient thread operations against the real CPPServer', () => {
  const real = useRealServer();

  it('renames a thread: the mirror and every other client show the title, which the list keeps', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const alice = real.connect(server);
    const tab = real.connect(server);
    const { threadId } = await alice.openThread();
    await tab.openThread(threadId);
    await alice.prompt({ userPrompt: 'Explain spiking neural networks.' });
    expect(alice.threadTitle()).toBe('Explain spiking neural networks.');

    const graph = await alice.renameThread('Spikes');
    expect(graph.version).toBe(3);
    expect(alice.threadTitle()).toBe('Spikes');
    await mirrorUntil(tab, threadId, () => tab.threadTitle(threadId) === 'Spikes');
    expect((await alice.listThreads()).map((thread) => thread.title)).toEqual(['Spikes']);
    await expect(alice.renameThread('Stale', { expectedVersion: 0 })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('deletes a thread: its mirror goes on every client, with the requests waiting on it, and it is no longer listed', async () => {
    const server = await real.start(ENDLESS_ANSWERS);
    const alice = real.connect(server);
    const tab = real.connect(server);
    const { threadId } = await alice.openThread();
    await tab.openThread(threadId);
    const answer = tab.prompt({ userPrompt: 'Go on forever.', threadId });
    await mirrorUntil(alice, threadId, () => (alice.streamingNode(threadId)?.content.length ?? 0) > 0);
    await expect(alice.deleteThread(threadId)).rejects.toEqual(expect.any(CPPServerError));
    await tab.stop({ threadId });
    await expect(answer).resolves.toMatchObject({ status: 'interrupted' });

    const deletedOnTab = new Promise<string>((resolve) => tab.once('threadDeleted', resolve));
    await alice.deleteThread(threadId);
    expect(await deletedOnTab).toBe(threadId);
    expect(alice.graph(threadId)).toBeUndefined();
    expect(tab.graph(threadId)).toBeUndefined();
    expect(alice.activeThreadId).toBeUndefined();
    expect(await alice.listThreads()).toEqual([]);
    await expect(alice.deleteThread(threadId)).resolves.toBeUndefined();
  });

  it('fails a request waiting on a thread another client deletes', async () => {
    const server = await real.start(ENDLESS_ANSWERS);
    const alice = real.connect(server);
    const bob = real.connect(server);
    const { threadId } = await alice.openThread();
    await bob.openThread(threadId);
    const first = alice.prompt({ userPrompt: 'Go on forever.' });
    await mirrorUntil(bob, threadId, () => (bob.streamingNode(threadId)?.content.length ?? 0) > 0);
    await bob.stop({ threadId });
    await first;
    // Settled into a value at once: it may fail while the delete is awaited, before anything else would handle it.
    const renamed = alice.renameThread('Will never show').then(
      () => undefined,
      (error: unknown) => error,
    );
    await bob.deleteThread(threadId);
    // Either the rename was applied before the delete, or it waits on a thread that no longer exists.
    const failure = await renamed;
    if (failure !== undefined)
      expect(failure).toSatisfy(
        (error) =>
          error instanceof ThreadClosedError || (error instanceof CPPServerError && error.code === 'NOT_FOUND'),
      );
    expect(alice.graph(threadId)).toBeUndefined();
  });

  it('searches, exports and imports', async () => {
    const server = await real.start(SHORT_ANSWERS);
    const alice = real.connect(server);
    const { threadId } = await alice.openThread();
    const answer = await alice.prompt({ userPrompt: 'Tell me about the Danube.' });

    const hits = await alice.searchThreads('danube');
    expect(hits.map((hit) => hit.nodeId)).toEqual([null, answer.assistantNodeId, expect.any(String)]);
    expect(hits[0]).toEqual({
      threadId,
      title: 'Tell me about the Danube.',
      nodeId: null,
      snippet: 'Tell me about the Danube.',
    });
    expect(await alice.searchThreads('danube', { limit: 1 })).toHaveLength(1);

    const markdown = await alice.exportThread('markdown');
    expect(markdown).toMatch(
      /^# Tell me about the Danube\.\n\n\*\*User\*\*\n\nTell me about the Danube\.\n\n---\n\n\*\*Assistant\*\*\n\n/,
    );
    const json = JSON.parse(await alice.exportThread('cpp-thread', threadId));
    expect(ThreadExportSchema.parse(json).thread).toEqual({ ...json.thread, threadId });

    const [copy] = await alice.importThreads('cpp-thread', json);
    expect(copy).toMatchObject({ title: 'Tell me about the Danube.', nodeCount: 2, version: 1 });
    const reopened = await alice.openThread(copy!.threadId);
    expect(
      Object.values(reopened.nodes)
        .map((node) => node.content)
        .sort(),
    ).toEqual(
      Object.values(json.thread.nodes as Record<string, { content: string }>)
        .map((node) => node.content)
        .sort(),
    );

    const imported = await alice.importThreads('chatgpt', chatGptExport());
    expect(imported.map((thread) => thread.title)).toEqual([
      'Rivers of Europe',
      'Plotting with code',
      'Edited first prompt',
      '',
    ]);
    await expect(alice.importThreads('chatgpt', { not: 'an export' })).rejects.toMatchObject({ code: 'INVALID_FRAME' });
  });
});
