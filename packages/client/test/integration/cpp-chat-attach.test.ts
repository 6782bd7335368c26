import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPPClient } from '@promethea/cpp-client';
import { type CPPServer, DemoProvider } from '@promethea/cpp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { pngImage } from '../../../server/test/support/test-files.js';
import { DID } from '../support/session.js';
import { ChatTerminal } from '../support/terminal.js';

// cpp-chat's /attach, typed on a terminal against a real server; the thread is read back by a client of the same DID.
describe('cpp-chat /attach', () => {
  let server: CPPServer;
  let folder: string;
  let chat: ChatTerminal | undefined;
  let observer: CPPClient | undefined;

  beforeAll(async () => {
    server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 40 }), auth: 'claimed' });
    folder = await mkdtemp(join(tmpdir(), 'cpp-chat-attach-'));
  });
  afterAll(async () => {
    await chat?.close();
    await observer?.close();
    await server?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it('uploads a file for the next message, which carries it; a file of no accepted type is refused at once', async () => {
    const notes = join(folder, 'notes.md');
    await writeFile(notes, '# Plan\nfirst step\n');
    const program = join(folder, 'program.bin');
    await writeFile(program, Buffer.from([0, 1, 2, 255, 254]));
    chat = await ChatTerminal.start([server.url, '--did', DID, '--thread', 'thread_attach'], {
      columns: 120,
      rows: 30,
    });
    await chat.until((rows) => rows.at(-1) === '›');

    await chat.enter(`/attach ${notes}`);
    await chat.until((rows) =>
      rows.some((row) => row === 'attached notes.md (text/plain, 18 bytes); your next message carries it'),
    );
    await chat.enter(`/attach ${program}`);
    await chat.until((rows) => rows.some((row) => row.startsWith('error: UNSUPPORTED_ATTACHMENT: the file is')));
    await chat.enter('Read my notes');
    // The answer wraps at the terminal's width: its rows are read as one text.
    const rows = await chat.until((screen) => screen.join('').includes('which begins: "# Plan / first step"'));

    expect(rows.join('')).toContain('You attached the file "notes.md" (text/plain, 18 bytes)');
    observer = new CPPClient({ endpoint: server.url, did: DID, reconnect: false });
    const graph = await observer.openThread('thread_attach');
    const prompt = Object.values(graph.nodes).find((node) => node.content === 'Read my notes');
    expect(prompt?.attachments?.map(({ name, mediaType }) => [name, mediaType])).toEqual([['notes.md', 'text/plain']]);
  });

  it('sends the files waiting alone on an empty line, and nothing on an empty line without files', async () => {
    const image = join(folder, 'screen.png');
    await writeFile(image, pngImage(3, 3));
    await chat?.close();
    await observer?.close();
    chat = await ChatTerminal.start([server.url, '--did', DID, '--thread', 'thread_attach_alone'], {
      columns: 120,
      rows: 30,
    });
    await chat.until((rows) => rows.at(-1) === '›');
    await chat.enter('');
    await chat.enter(`/attach ${image}`);
    await chat.until((rows) => rows.some((row) => row.startsWith('attached screen.png (image/png, 3×3, ')));
    await chat.enter('');
    const rows = await chat.until((screen) => screen.join('').includes('You attached the image "screen.png"'));

    expect(rows.join('')).toContain('(demo model, turn 1) You attached the image "screen.png" (image/png, 3×3 pixels');
    observer = new CPPClient({ endpoint: server.url, did: DID, reconnect: false });
    const graph = await observer.openThread('thread_attach_alone');
    const prompts = Object.values(graph.nodes).filter((node) => node.role === 'user');
    expect(prompts.map(({ content, attachments }) => [content, attachments?.map(({ name }) => name)])).toEqual([
      ['', ['screen.png']],
    ]);
  });
});
