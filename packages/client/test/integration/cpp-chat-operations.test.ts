import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CPPClient } from '@promethea/cpp-client';
import { DemoProvider, type CPPServer } from '@promethea/cpp-server';
import { getNode, type ThreadGraph } from '@promethea/cpp-protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { DID, mirrorUntil } from '../support/session.js';
import { ChatTerminal } from '../support/terminal.js';

// cpp-chat's commands for the conversation operations (PROTOCOL.md §24, §25), typed on a terminal against a real
// server; what they did is read back from the server by a client of the same DID.
/** A ChatGPT data export's conversations.json of five conversations, with branches. */
const CHATGPT_EXPORT = fileURLToPath(
  new URL('../../../protocol/test/fixtures/chatgpt-conversations.json', import.meta.url),
);

describe('cpp-chat conversation commands', () => {
  let server: CPPServer;
  let folder: string;
  let chat: ChatTerminal;
  let observer: CPPClient;

  beforeAll(async () => {
    server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 6 }), auth: 'claimed' });
    folder = await mkdtemp(join(tmpdir(), 'cpp-chat-ops-'));
  });
  afterAll(async () => {
    await chat?.close();
    await observer?.close();
    await server?.close();
    await rm(folder, { recursive: true, force: true });
  });

  /** Enters a line that starts an answer, and waits until the answer has ended on screen (a blank line, then the prompt). */
  async function answered(line: string): Promise<void> {
    await chat.enter(line);
    await chat.until((rows) => {
      const typed = rows.lastIndexOf(`› ${line}`);
      return typed >= 0 && rows.length - typed >= 4 && rows.at(-1) === '›' && rows.at(-2) === '';
    });
  }

  /** Enters a command and waits for the line that starts its answer. */
  async function command(line: string, answer: RegExp): Promise<string> {
    await chat.enter(line);
    const rows = await chat.until((screen) => screen.some((row) => answer.test(row)));
    return rows.find((row) => answer.test(row))!;
  }

  /** The thread as the server has it now. */
  const thread = async (): Promise<ThreadGraph> => observer.requestSync('thread_ops');

  it('regenerates, edits, deletes a branch, renames, searches, exports, deletes the thread and imports', async () => {
    chat = await ChatTerminal.start([server.url, '--did', DID, '--thread', 'thread_ops'], { columns: 100, rows: 40 });
    await chat.until((rows) => rows.at(-1) === '›');
    observer = new CPPClient({ endpoint: server.url, did: DID, reconnect: false });

    await answered('Tell me about trees.');
    await answered('And about forests?');
    await observer.openThread('thread_ops');
    const forests = Object.values((await thread()).nodes).find((node) => node.content === 'And about forests?');

    // /regenerate: a second answer to the head's prompt, beside the first.
    await answered('/regenerate');
    expect(getNode(await thread(), forests!.id)!.childrenIds).toHaveLength(2);

    // /edit by number in /tree (3 is "And about forests?"): a new prompt beside it, answered.
    expect(await command('/tree', /^ *3 .*And about forests\?/)).toContain(forests!.id);
    await answered('/edit 3 And about rivers?');
    let graph = await thread();
    const rivers = Object.values(graph.nodes).find((node) => node.content === 'And about rivers?')!;
    expect(rivers.parentId).toBe(forests!.parentId);
    expect(getNode(graph, rivers.childrenIds[0]!)).toMatchObject({ role: 'assistant', status: 'completed' });

    // /delete by the start of an id: the forests branch goes, the head (under rivers) stays.
    expect(await command(`/delete ${forests!.id.slice(0, 20)}`, /^deleted msg_/)).toContain(forests!.id);
    graph = await thread();
    expect(getNode(graph, forests!.id)).toBeUndefined();
    expect(graph.activeHeadMessageId).toBe(rivers.childrenIds[0]);
    expect(await command('/delete 99', /^error: /)).toBe('error: there is no message 99: /tree numbers them 1 to 4');

    expect(await command('/rename Nature notes', /^thread renamed/)).toBe('thread renamed "Nature notes"');
    expect((await observer.listThreads())[0]).toMatchObject({ threadId: 'thread_ops', title: 'Nature notes' });

    expect(await command('/search rivers', /^1 {2}thread_ops/)).toMatch(
      /^1 {2}thread_ops "Nature notes", message msg_\S+: .*rivers/i,
    );

    const file = join(folder, 'thread.md');
    await command(`/export ${file}`, /^wrote the branch as Markdown/);
    const markdown = await readFile(file, 'utf8');
    expect(markdown).toContain('Nature notes');
    expect(markdown).toContain('And about rivers?');
    expect(markdown).not.toContain('forests');
    const json = join(folder, 'thread.json');
    await command(`/export ${json}`, /^wrote the thread as CPP JSON/);
    expect(JSON.parse(await readFile(json, 'utf8'))).toMatchObject({ format: 'cpp-thread' });

    expect(await command('/delete-thread thread_op', /^deleted thread/)).toBe(
      'deleted thread thread_ops; no thread is open: type to start a new one, or /open one',
    );
    expect(await observer.listThreads()).toEqual([]);

    // /import tells the format from the content: the CPP JSON export comes back as a thread, listed as /threads does.
    expect(await command(`/import ${json}`, /^imported \d+ thread /)).toBe(
      'imported 1 thread (CPP JSON); /open THREAD opens one',
    );
    await chat.until((rows) => rows.some((row) => /^1 {3}\S+ "Nature notes" \(4 messages\)$/.test(row)));
    expect(await observer.listThreads()).toMatchObject([{ title: 'Nature notes', nodeCount: 4 }]);
    expect(await command(`/import ${CHATGPT_EXPORT}`, /^imported \d+ threads/)).toBe(
      'imported 4 threads (ChatGPT conversations); /open THREAD opens one',
    );
    await chat.until((rows) => rows.some((row) => /^2 {3}\S+ "Rivers of Europe" \(7 messages\)$/.test(row)));
    expect(await observer.listThreads()).toHaveLength(5);

    // A file that is not JSON, one of neither kind, and one the server refuses: said in words, nothing imported.
    const broken = join(folder, 'broken.json');
    await writeFile(broken, '{"format": "cpp-thread",');
    expect(await command(`/import ${broken}`, /^error: the file is not JSON/)).toMatch(/^error: the file is not JSON/);
    await writeFile(broken, '{"threads": []}');
    expect(await command(`/import ${broken}`, /^error: the file is neither/)).toMatch(
      /^error: the file is neither a CPP thread export/,
    );
    await writeFile(
      broken,
      JSON.stringify([{ title: 'Half', mapping: { a: { id: 'a', message: null, parent: null, children: ['b'] } } }]),
    );
    expect(await command(`/import ${broken}`, /^error: [A-Z_]+: /)).toMatch(/^error: [A-Z_]+: /);
    expect(await observer.listThreads()).toHaveLength(5);

    await chat.enter('/quit');
    expect(await chat.exited()).toBe(0);
  });
});

describe('cpp-chat /continue', () => {
  let server: CPPServer;
  let chat: ChatTerminal;
  let observer: CPPClient;

  beforeAll(async () => {
    // Slow enough to stop mid-answer: 60 words, one every 20 ms.
    server = await startServer({ model: new DemoProvider({ delayMs: 20, words: 60 }), auth: 'claimed' });
  });
  afterAll(async () => {
    await chat?.close();
    await observer?.close();
    await server?.close();
  });

  const answerOf = (graph: ThreadGraph) => Object.values(graph.nodes).find((node) => node.role === 'assistant');

  it('goes on with a stopped answer in the same message', async () => {
    chat = await ChatTerminal.start([server.url, '--did', DID, '--thread', 'thread_continue'], {
      columns: 100,
      rows: 40,
    });
    await chat.until((rows) => rows.at(-1) === '›');
    observer = new CPPClient({ endpoint: server.url, did: DID, reconnect: false });
    await observer.openThread('thread_continue');

    await chat.enter('Tell me about trees.');
    await mirrorUntil(observer, 'thread_continue', (graph) => (answerOf(graph)?.content.length ?? 0) > 20);
    await chat.enter('/stop');
    await chat.until((rows) => rows.some((row) => /^\[interrupted after \d+ characters\]$/.test(row)));
    const stopped = answerOf(
      await mirrorUntil(observer, 'thread_continue', (graph) => answerOf(graph)?.status === 'interrupted'),
    )!;

    await chat.enter('/continue');
    const continued = answerOf(
      await mirrorUntil(observer, 'thread_continue', (graph) => answerOf(graph)?.status === 'completed'),
    )!;
    expect(continued.id).toBe(stopped.id);
    expect(continued.content.startsWith(stopped.content)).toBe(true);
    expect(continued.content.length).toBeGreaterThan(stopped.content.length);
    const tail = continued.content.slice(stopped.content.length).trim().split(' ').slice(-2).join(' ');
    await chat.until((rows) => rows.join(' ').includes(tail));

    await chat.enter('/quit');
    expect(await chat.exited()).toBe(0);
  });
});
