import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CPPServerError } from '@promethea/cpp-client';
import { afterAll, describe, expect, it } from 'vitest';
import { pngImage } from '../../../server/test/support/test-files.js';
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
});
