import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPPServerError } from '@promethea/cpp-client';
import { afterAll, describe, expect, it } from 'vitest';
import { pdfDocument, pngImage } from '../../../server/test/support/test-files.js';
import { useRealServer } from '../support/real-server.js';

const folder = mkdtempSync(join(tmpdir(), 'cpp-client-attachments-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Long enough for the demo's description of the files, which opens its answer. */
const DESCRIBING = { delayMs: 0, words: 90 };

describe('CPPClient with attachments', () => {
  const real = useRealServer();

  it('uploads a path, bytes and a File before the prompt, which carries them; the demo model describes them', async () => {
    const server = await real.start(DESCRIBING);
    const client = real.connect(server);
    const path = join(folder, 'notes.txt');
    writeFileSync(path, 'first line\nsecond line\n');
    const image = pngImage(2, 2);

    const result = await client.prompt({
      userPrompt: 'What did I send?',
      attachments: [path, { name: 'chart.png', bytes: image }, new File(['# Title\n'], 'page.md')],
    });

    const files = client.graph()?.nodes[result.userNodeId]?.attachments;
    expect(files?.map(({ name, mediaType, size }) => [name, mediaType, size])).toEqual([
      ['notes.txt', 'text/plain', 23],
      ['chart.png', 'image/png', image.length],
      ['page.md', 'text/plain', 8],
    ]);
    expect(result.content).toContain(
      `You attached the file "notes.txt" (text/plain, 23 bytes), which begins: "first line / second line"; the image "chart.png" (image/png, 2×2 pixels, ${image.length} bytes); the file "page.md" (text/plain, 8 bytes), which begins: "# Title".`,
    );
  });

  it('sends a prompt of an image and no text, which the server answers and titles by the file’s name', async () => {
    const server = await real.start(DESCRIBING);
    const client = real.connect(server);
    const image = pngImage(2, 2);

    const result = await client.prompt({ userPrompt: '', attachments: [{ name: 'screenshot.png', bytes: image }] });

    expect(client.graph()?.nodes[result.userNodeId]).toMatchObject({
      content: '',
      attachments: [{ name: 'screenshot.png' }],
    });
    expect(result.content).toContain(
      `You attached the image "screenshot.png" (image/png, 2×2 pixels, ${image.length} bytes).`,
    );
    const [listed] = await client.listThreads();
    expect(listed?.title).toBe('screenshot.png');
  });

  it('names a file uploaded before in an edit, and refuses a file of no type the server takes', async () => {
    const server = await real.start(DESCRIBING);
    const client = real.connect(server);
    const uploaded = await (await client.attachments()).upload({
      name: 'a.txt',
      bytes: new TextEncoder().encode('alpha'),
    });
    const first = await client.prompt({ userPrompt: 'One', attachments: [uploaded] });

    const edited = await client.edit({ nodeId: first.userNodeId, userPrompt: 'Two', attachments: [uploaded] });

    expect(client.graph()?.nodes[edited.userNodeId]?.attachments).toEqual([uploaded]);
    const refused = (await client.attachments()).upload({ name: 'x.bin', bytes: new Uint8Array([0, 159, 146, 150]) });
    await expect(refused).rejects.toSatisfy(
      (error) => CPPServerError.isInstance(error) && error.code === 'UNSUPPORTED_ATTACHMENT',
    );
  });

  it('gives the URL a file is served at, for an <img src>: the bytes with the sniffed type', async () => {
    const server = await real.start(DESCRIBING);
    const client = real.connect(server);
    const image = pngImage(2, 3);
    const result = await client.prompt({ userPrompt: 'Look', attachments: [{ name: 'tall.png', bytes: image }] });
    const [file] = client.graph()?.nodes[result.userNodeId]?.attachments ?? [];

    const response = await fetch(await (await client.attachments()).url(file!.id));

    expect(response.headers.get('content-type')).toBe('image/png');
    expect(new Uint8Array(await response.arrayBuffer())).toEqual(new Uint8Array(image));
  });

  it('exports the files of a thread in its CPP JSON, base64 by SHA-256, and imports them back as files of the new thread', async () => {
    const server = await real.start(DESCRIBING);
    const alice = real.connect(server);
    const image = pngImage(3, 2);
    const paper = pdfDocument('Round trip');
    const first = await alice.prompt({
      userPrompt: 'Look',
      attachments: [
        { name: 'plot.png', bytes: image },
        { name: 'paper.pdf', bytes: paper },
      ],
    });
    // An edit carries the same files again: the export holds their bytes once.
    await alice.edit({
      nodeId: first.userNodeId,
      userPrompt: 'Look again',
      attachments: alice.graph()!.nodes[first.userNodeId]!.attachments,
    });
    const sent = alice.graph()!.nodes[first.userNodeId]!.attachments!;

    const exported = JSON.parse(await alice.exportThread('cpp-thread'));
    expect(Object.keys(exported.files).sort()).toEqual(sent.map(({ sha256 }) => sha256).sort());
    expect(Buffer.from(exported.files[sent[0]!.sha256], 'base64')).toEqual(Buffer.from(image));
    expect(Buffer.from(exported.files[sent[1]!.sha256], 'base64')).toEqual(Buffer.from(paper));

    // Another identity imports it (the client uploads the files first, and the frame names the uploads): the new
    // thread's messages carry files of their own, with the same bytes; the document given is left as it was.
    const bob = real.connect(server, 'did:example:bob');
    const [imported] = await bob.importThreads('cpp-thread', exported);
    expect(Object.keys(exported.files)).toHaveLength(2);
    const graph = await bob.openThread(imported!.threadId);
    const prompts = Object.values(graph.nodes).filter((node) => node.role === 'user');
    expect(prompts).toHaveLength(2);
    const carried = prompts.map((node) => node.attachments!);
    expect(carried[0]!.map(({ name, sha256, width }) => [name, sha256, width])).toEqual([
      ['plot.png', sent[0]!.sha256, 3],
      ['paper.pdf', sent[1]!.sha256, undefined],
    ]);
    // Both prompts name the same new files, which are not Alice's.
    expect(carried[1]!.map(({ id }) => id)).toEqual(carried[0]!.map(({ id }) => id));
    expect(carried[0]!.map(({ id }) => id)).not.toEqual(sent.map(({ id }) => id));
    const uploads = await bob.attachments();
    expect(await uploads.bytes(carried[0]![0]!.id)).toEqual(new Uint8Array(image));
    expect(await uploads.bytes(carried[0]![1]!.id)).toEqual(new Uint8Array(paper));
  });

  it('refuses an import whose messages name files it holds no bytes of, importing nothing', async () => {
    const server = await real.start(DESCRIBING);
    const alice = real.connect(server);
    await alice.prompt({ userPrompt: 'Look', attachments: [{ name: 'plot.png', bytes: pngImage(2, 2) }] });
    const exported = JSON.parse(await alice.exportThread('cpp-thread'));
    delete exported.files;

    const bob = real.connect(server, 'did:example:bob');
    await expect(bob.importThreads('cpp-thread', exported)).rejects.toThrow(
      /payload\.document: thread 1: a message carries plot\.png \(att_[\w-]+\), whose bytes the document does not hold/,
    );
    expect(await bob.listThreads()).toEqual([]);
  });
});
