import { CPPClient } from '@promethea/cpp-client';
import { DemoProvider, type CPPServer } from '@promethea/cpp-server';
import { getNode } from '@promethea/cpp-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { DID } from '../support/session.js';
import { ChatTerminal } from '../support/terminal.js';

// cpp-chat's /models (PROTOCOL.md §30), typed on a terminal against a real server of three demo models; what the
// prompts asked for is read back by a client of the same DID.
describe('cpp-chat /models', () => {
  let server: CPPServer;
  let chat: ChatTerminal | undefined;
  let observer: CPPClient | undefined;

  beforeAll(async () => {
    const demo = (model: string, words: number) => new DemoProvider({ delayMs: 0, words, model });
    server = await startServer({
      models: [
        { id: 'alpha', label: 'Alpha', provider: demo('alpha', 3) },
        { id: 'beta', label: 'Beta', provider: demo('beta', 4) },
        { id: 'gamma', label: 'Gamma', provider: demo('gamma', 5) },
      ],
      auth: 'claimed',
    });
  });
  afterAll(async () => {
    await chat?.close();
    await observer?.close();
    await server?.close();
  });

  it('lists the models, sends the next prompts to those chosen, side by side, each answer under its model', async () => {
    chat = await ChatTerminal.start([server.url, '--did', DID, '--thread', 'thread_models'], {
      columns: 100,
      rows: 40,
    });
    await chat.until((rows) => rows.at(-1) === '›');

    await chat.enter('/models');
    const listed = await chat.until((rows) => rows.some((row) => row.startsWith('(* answers the next prompts')));
    expect(listed.filter((row) => /^[* ] (alpha|beta|gamma) /.test(row))).toEqual([
      '* alpha  Alpha (default)',
      '  beta   Beta',
      '  gamma  Gamma',
    ]);

    await chat.enter('/models beta,delta');
    await chat.until((rows) => rows.some((row) => row === 'error: no model delta here: /models lists them'));
    await chat.enter('/models gamma, beta');
    await chat.until((rows) => rows.some((row) => row === 'the next prompts go to gamma, beta, side by side'));
    await chat.enter('Compare');
    // The first answer streams under its model's name; the other follows, whole, under its own once both ended.
    const rows = await chat.until((screen) => {
      const typed = screen.lastIndexOf('› Compare');
      const after = screen.slice(typed);
      return typed >= 0 && after.includes('[gamma]') && after.includes('[beta]') && screen.at(-1) === '›';
    });
    const after = rows.slice(rows.lastIndexOf('› Compare'));
    expect(after.indexOf('[gamma]')).toBeLessThan(after.indexOf('[beta]'));

    observer = new CPPClient({ endpoint: server.url, did: DID, reconnect: false });
    const graph = await observer.openThread('thread_models');
    const prompt = Object.values(graph.nodes).find((node) => node.content === 'Compare')!;
    const answers = prompt.childrenIds.map((id) => getNode(graph, id)!);
    expect(answers.map(({ model, status }) => [model, status])).toEqual([
      ['gamma', 'completed'],
      ['beta', 'completed'],
    ]);
    expect(after.join('\n')).toContain(answers[1]!.content.split('\n')[0]!.slice(0, 20));

    await chat.enter('/models default');
    await chat.until((rows) => rows.some((row) => row === 'the next prompts go to the default model, alpha'));
    await chat.enter('Alone');
    await chat.until((screen) => screen.lastIndexOf('› Alone') >= 0 && screen.at(-1) === '›' && screen.at(-2) === '');
    const alone = (await observer.requestSync('thread_models')).nodes;
    const lone = Object.values(alone).find((node) => node.content === 'Alone')!;
    expect(lone.childrenIds.map((id) => alone[id]?.model)).toEqual(['alpha']);
  });
});
