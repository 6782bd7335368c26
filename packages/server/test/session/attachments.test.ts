import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { readdirSync, readFileSync, watch } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { type Attachment, newMessageId } from '@promethea/cpp-protocol';
import { type CPPServer, MemoryStore } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  completion,
  expectError,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import type { FrameOf, RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { startServer, useServer } from '../support/start-server.js';
import { temporaryDatabase } from '../support/temporary-database.js';
import { pdfDocument, pngBomb, pngImage } from '../support/test-files.js';

const fixture = useServer();

const ALICE = 'did:example:alice';
const BOB = 'did:example:bob';

type Ticket = FrameOf<'CPP_ATTACHMENT_TICKET'>['payload'];

async function ticketOf(client: RawClient): Promise<Ticket> {
  client.send('CPP_ATTACHMENT_TICKET_REQUEST', {});
  return (await client.next('CPP_ATTACHMENT_TICKET')).payload;
}

function endpoint(server: CPPServer, path = '/v1/cpp/attachments'): string {
  return `http://127.0.0.1:${server.port}${path}`;
}

function upload(server: CPPServer, ticket: string, name: string, bytes: Uint8Array): Promise<Response> {
  return fetch(`${endpoint(server)}?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ticket}` },
    body: new Blob([bytes as Uint8Array<ArrayBuffer>]),
  });
}

async function uploaded(server: CPPServer, ticket: string, name: string, bytes: Uint8Array): Promise<Attachment> {
  const response = await upload(server, ticket, name, bytes);
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as Attachment;
}

function download(server: CPPServer, ticket: string, attachmentId: string): Promise<Response> {
  return fetch(`${endpoint(server)}/${attachmentId}?ticket=${encodeURIComponent(ticket)}`);
}

/** Resolves once the names in the folder are as `wanted` says: at once, or at the change that makes them so. */
async function folderChanged(folder: string, wanted: (names: string[]) => boolean): Promise<void> {
  const watcher = watch(folder);
  try {
    while (!wanted(readdirSync(folder))) await once(watcher, 'change');
  } finally {
    watcher.close();
  }
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const text = (value: string) => new TextEncoder().encode(value);

async function connectAs(did: string): Promise<{ client: RawClient; ticket: string }> {
  const client = await fixture.connect({ query: `did=${encodeURIComponent(did)}` });
  return { client, ticket: (await ticketOf(client)).ticket };
}

describe('attachments', () => {
  it('hands out a ticket with the upload path and the limits', async () => {
    await fixture.start({ attachments: { maxBytes: 1234 } });
    const client = await fixture.connect();

    const ticket = await ticketOf(client);

    expect(ticket).toMatchObject({ uploadPath: '/v1/cpp/attachments', maxBytes: 1234, maxPerPrompt: 10 });
    expect(ticket.mediaTypes).toEqual([
      'image/png',
      'image/jpeg',
      'image/webp',
      'image/gif',
      'application/pdf',
      'text/plain',
    ]);
    expect(ticket.expiresAt).toBeGreaterThan(Date.now());
  });

  it('stores an upload by the type of its bytes, and a prompt carries it: the node lists it, the demo model describes it', async () => {
    const server = await fixture.start();
    const { client, ticket } = await connectAs(ALICE);
    const image = pngImage(3, 2);
    const notes = text('first line\nsecond line\nthird line\nfourth line\n');

    const picture = await uploaded(server, ticket, 'photo.txt', image);
    const file = await uploaded(server, ticket, 'notes.md', notes);

    expect(picture).toEqual({
      id: expect.stringMatching(/^att_/),
      name: 'photo.txt',
      mediaType: 'image/png',
      size: image.length,
      sha256: sha256(image),
      width: 3,
      height: 2,
    });
    expect(file).toMatchObject({
      name: 'notes.md',
      mediaType: 'text/plain',
      size: notes.length,
      sha256: sha256(notes),
    });

    const { threadId } = await openThread(client, { patches: true });
    const exchange = await prompt(client, threadId, 'What is this?', { attachments: [picture.id, file.id] });
    expect(exchange.update.nodes[exchange.userNodeId]?.attachments).toEqual([picture, file]);
    await completion(client, threadId, exchange.assistantNodeId);
    expect(streamedText(client, exchange.assistantNodeId)).toContain(
      `You attached the image "photo.txt" (image/png, 3×2 pixels, ${image.length} bytes); the file "notes.md" (text/plain, ${notes.length} bytes), which begins: "first line / second line / third line".`,
    );
    const synced = await openThread(await fixture.connect({ query: `did=${ALICE}` }), { threadId });
    expect(synced.nodes[exchange.userNodeId]?.attachments).toEqual([picture, file]);
  });

  it('answers a prompt of an image and no text, titled by the file’s name; blank text without files is still refused', async () => {
    const server = await fixture.start();
    const { client, ticket } = await connectAs(ALICE);
    const image = pngImage(3, 2);
    const picture = await uploaded(server, ticket, '  screen   shot.png', image);
    const { threadId } = await openThread(client, { patches: true });

    client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt: ' \n', newNodeId: newMessageId() });
    const refusal = await expectError(client, 'INVALID_FRAME', { refType: 'CPP_PROMPT' });
    expect(refusal.message).toMatch(/^payload\.userPrompt: /);

    const exchange = await prompt(client, threadId, '', { attachments: [picture.id] });
    expect(exchange.update.nodes[exchange.userNodeId]).toMatchObject({ content: '', attachments: [picture] });
    await completion(client, threadId, exchange.assistantNodeId);
    expect(streamedText(client, exchange.assistantNodeId)).toMatch(
      new RegExp(
        `^\\(demo model, turn 1\\) You attached the image "screen shot\\.png" \\(image/png, 3×2 pixels, ${image.length} bytes\\)\\.`,
      ),
    );
    const synced = await openThread(await fixture.connect({ query: `did=${ALICE}` }), { threadId });
    expect(synced.title).toBe('screen shot.png');
  });

  it('gives a model that reads no files each one as text: a text file inlined with its name, any other named', async () => {
    const model = new ScriptedModel(() => ({ chunks: ['Seen'] }));
    const server = await fixture.start({ model });
    const { client, ticket } = await connectAs(ALICE);
    const csv = await uploaded(server, ticket, 'data.csv', text('a,b\n1,2\n'));
    const image = await uploaded(server, ticket, 'cat.png', pngImage(4, 4));
    const { threadId } = await openThread(client, { patches: true });

    const first = await prompt(client, threadId, 'Sum it', { attachments: [csv.id, image.id] });
    (await model.call(0)).releaseAll();
    await completion(client, threadId, first.assistantNodeId);

    expect(model.calls[0]?.messages).toEqual([
      {
        role: 'user',
        content: `Sum it\n\n<file name="data.csv">\na,b\n1,2\n\n</file>\n\n[The person attached the image "cat.png" (image/png, 4×4 pixels, ${image.size} bytes); this model cannot read it, so only its name is given.]`,
      },
    ]);
  });

  it('lets an edit and a pivot of the same thread carry a file again, and refuses another identity’s or another thread’s', async () => {
    const model = new ScriptedModel(() => ({ chunks: ['one', ' two'] }));
    const server = await fixture.start({ model });
    const alice = await connectAs(ALICE);
    const bob = await connectAs(BOB);
    const file = await uploaded(server, alice.ticket, 'a.txt', text('hello'));
    const bobs = await uploaded(server, bob.ticket, 'b.txt', text('bob'));
    const { threadId } = await openThread(alice.client, { patches: true });

    alice.client.send('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'Read',
      newNodeId: newMessageId(),
      attachments: [bobs.id],
    });
    await expectError(alice.client, 'NOT_FOUND', { refType: 'CPP_PROMPT' });
    const first = await prompt(alice.client, threadId, 'Read', { attachments: [file.id] });
    (await model.call(0)).release(1);
    const pivoted = await pivot(alice.client, threadId, first.assistantNodeId, 'Again', { attachments: [file.id] });
    expect(pivoted.update.nodes[pivoted.userNodeId]?.attachments).toEqual([file]);
    (await model.call(1)).releaseAll();
    await completion(alice.client, threadId, pivoted.assistantNodeId);

    const other = await openThread(alice.client, { patches: true });
    alice.client.send('CPP_PROMPT', {
      activeThreadId: other.threadId,
      userPrompt: 'Elsewhere',
      newNodeId: newMessageId(),
      attachments: [file.id],
    });
    const refusal = await expectError(alice.client, 'NOT_FOUND', { refType: 'CPP_PROMPT' });
    expect(refusal.message).toBe(`attachment ${file.id} does not exist`);
  });

  it('serves a file with its sniffed type: an image inline, anything else as a download, none of it able to run', async () => {
    const server = await fixture.start();
    const { ticket } = await connectAs(ALICE);
    const image = pngImage(2, 2);
    const picture = await uploaded(server, ticket, 'pic.png', image);
    const svg = text('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>');
    const drawing = await uploaded(server, ticket, 'drawing.svg', svg);
    const pdf = await uploaded(server, ticket, 'report.pdf', pdfDocument('Quarterly report'));

    const served = await download(server, ticket, picture.id);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(new Uint8Array(image));
    const header = (name: string) => served.headers.get(name);
    expect(['content-type', 'content-disposition', 'x-content-type-options'].map(header)).toEqual([
      'image/png',
      "inline; filename*=UTF-8''pic.png",
      'nosniff',
    ]);
    expect(header('content-security-policy')).toContain('sandbox');

    expect(drawing.mediaType).toBe('text/plain');
    const script = await download(server, ticket, drawing.id);
    expect(script.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(script.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''drawing.svg");

    expect(pdf.mediaType).toBe('application/pdf');
    const document = await download(server, ticket, pdf.id);
    expect(document.headers.get('content-type')).toBe('application/pdf');
    expect(document.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''report.pdf");
  });

  it('serves a polyglot as the type its bytes begin with, never as the HTML hidden in it', async () => {
    const server = await fixture.start();
    const { ticket } = await connectAs(ALICE);
    const polyglot = Buffer.concat([pngImage(1, 1), text('<html><script>alert(1)</script></html>')]);

    const file = await uploaded(server, ticket, 'innocent.html', polyglot);
    const served = await download(server, ticket, file.id);

    expect(file.mediaType).toBe('image/png');
    expect(served.headers.get('content-type')).toBe('image/png');
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
    expect(served.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox$/);
  });

  it('keeps nothing of an upload cut off midway, nor of one refused as it streams past the limit', async () => {
    const store = new MemoryStore();
    const server = await fixture.start({ store, attachments: { maxBytes: 4096 } });
    const { ticket } = await connectAs(ALICE);

    const cut = httpRequest(`${endpoint(server)}?name=cut.txt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ticket}`, 'Content-Length': 2000 },
    });
    cut.on('error', () => undefined);
    cut.write('x'.repeat(1000), () => cut.destroy());
    await new Promise((resolve) => cut.on('close', resolve));

    const chunks = [text('y'.repeat(3000)), text('y'.repeat(3000))];
    const streamed = await fetch(`${endpoint(server)}?name=streamed.txt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ticket}` },
      body: new ReadableStream({
        pull: (controller) => void (chunks.length ? controller.enqueue(chunks.shift()) : controller.close()),
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);

    // A whole upload afterwards is the first thing kept: the two before it left nothing.
    await uploaded(server, ticket, 'whole.txt', text('whole'));
    expect(await store.uploadedBytesSince(ALICE, 0)).toBe(5);
  });

  it('writes an upload into a SQLite store while its body arrives, and leaves nothing of one cut off midway', async () => {
    const database = temporaryDatabase();
    const store = SqliteStore.open(database.path);
    try {
      const server = await fixture.start({ store });
      const { ticket } = await connectAs(ALICE);
      const files = `${database.path}.files`;
      const temporary = join(files, 'tmp');

      const whole = text(`${'a line of text, é\n'.repeat(60_000)}`);
      const file = await uploaded(server, ticket, 'whole.txt', whole);
      expect([file.size, file.sha256]).toEqual([whole.length, sha256(whole)]);
      expect(readdirSync(temporary)).toEqual([]);
      expect(readFileSync(join(files, file.sha256.slice(0, 2), file.sha256)).equals(whole)).toBe(true);

      const cut = httpRequest(`${endpoint(server)}?name=cut.txt`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ticket}`, 'Content-Length': 1024 * 1024 },
      });
      cut.on('error', () => undefined);
      const written = folderChanged(temporary, (names) => names.length === 1);
      cut.write('x'.repeat(64 * 1024));
      // Its file is there before its body has ended, and goes when the body never does.
      await written;
      cut.destroy();
      await folderChanged(temporary, (names) => names.length === 0);
      expect(await store.uploadedBytesSince(ALICE, 0)).toBe(whole.length);
    } finally {
      await store.close();
      database.remove();
    }
  });

  it('keeps a body that comes in pieces, with a length or without one (chunked), as the whole of its bytes', async () => {
    const server = await fixture.start();
    const { ticket } = await connectAs(ALICE);
    const pieces = Array.from({ length: 40 }, (_, index) => text(`line ${index} ${'é'.repeat(index * 50)}\n`));
    const whole = Buffer.concat(pieces);
    const send = (headers: Record<string, string | number>) =>
      new Promise<Attachment>((resolve, reject) => {
        const request = httpRequest(`${endpoint(server)}?name=pieces.txt`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${ticket}`, ...headers },
        });
        request.on('response', (response) => {
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => (response.statusCode === 201 ? resolve(JSON.parse(body)) : reject(new Error(body))));
        });
        request.on('error', reject);
        const next = (index: number): void => {
          if (index === pieces.length) return void request.end();
          request.write(pieces[index], () => next(index + 1));
        };
        next(0);
      });

    for (const kept of [await send({ 'Content-Length': whole.length }), await send({})]) {
      expect([kept.size, kept.sha256, kept.mediaType]).toEqual([whole.length, sha256(whole), 'text/plain']);
      expect(Buffer.from(await (await download(server, ticket, kept.id)).arrayBuffer())).toEqual(whole);
    }
  });

  it('refuses what it does not take, each with its code, and keeps nothing of it', async () => {
    const server = await fixture.start({ attachments: { maxBytes: 4096, bytesPerDay: 6000, maxImagePixels: 10_000 } });
    const { ticket } = await connectAs(ALICE);
    const refusal = async (response: Response) => [response.status, ((await response.json()) as { code: string }).code];

    const binary = Uint8Array.from({ length: 64 }, (_, index) => (index * 37) % 256);
    const unsupported = await upload(server, ticket, 'program.exe', binary);
    expect(await refusal(unsupported.clone())).toEqual([415, 'UNSUPPORTED_ATTACHMENT']);
    expect(((await unsupported.json()) as { message: string }).message).toContain(
      'accepted: PNG, JPEG, WebP or GIF images, PDF, or UTF-8 text',
    );
    expect(await refusal(await upload(server, ticket, 'empty.txt', new Uint8Array(0)))).toEqual([
      415,
      'UNSUPPORTED_ATTACHMENT',
    ]);
    expect(await refusal(await upload(server, ticket, 'bomb.png', pngBomb(50_000, 50_000)))).toEqual([
      415,
      'UNSUPPORTED_ATTACHMENT',
    ]);
    expect(await refusal(await upload(server, ticket, 'big.txt', text('x'.repeat(5000))))).toEqual([
      413,
      'ATTACHMENT_TOO_LARGE',
    ]);
    await uploaded(server, ticket, 'a.txt', text('y'.repeat(4000)));
    expect(await refusal(await upload(server, ticket, 'b.txt', text('z'.repeat(4000))))).toEqual([429, 'RATE_LIMITED']);
    expect(await refusal(await upload(server, 'v1.forged.ticket', 'c.txt', text('c')))).toEqual([401, 'UNAUTHORIZED']);
    const unticketed = await fetch(endpoint(server), { method: 'POST', body: text('hi') });
    expect(await refusal(unticketed)).toEqual([401, 'UNAUTHORIZED']);
  });

  it('keeps a file name, never a path', async () => {
    const server = await fixture.start();
    const { ticket } = await connectAs(ALICE);

    const file = await uploaded(server, ticket, '../../etc/passwd', text('root:x:0:0'));
    const windows = await uploaded(server, ticket, '..\\..\\boot.ini', text('[boot]'));
    const dots = await uploaded(server, ticket, '..', text('dots'));

    expect([file.name, windows.name, dots.name]).toEqual(['passwd', 'boot.ini', 'file']);
  });

  it('serves a file only to an identity that may read it, and another identity’s as one that does not exist', async () => {
    const server = await fixture.start({
      auth: (request) => ({
        did: new URL(request.url ?? '/', 'http://localhost').searchParams.get('did') ?? '',
        verified: true,
      }),
    });
    const alice = await connectAs(ALICE);
    const bob = await connectAs(BOB);
    const file = await uploaded(server, alice.ticket, 'secret.txt', text('secret'));

    const answer = async (response: Response) => [response.status, await response.text()];
    expect(await answer(await download(server, bob.ticket, file.id))).toEqual([
      404,
      JSON.stringify({ code: 'NOT_FOUND', message: `attachment ${file.id} does not exist` }),
    ]);
    expect(await answer(await download(server, bob.ticket, 'att_00000000000000000000000000'))).toEqual([
      404,
      JSON.stringify({ code: 'NOT_FOUND', message: 'attachment att_00000000000000000000000000 does not exist' }),
    ]);

    const { threadId } = await openThread(alice.client, { patches: true });
    const exchange = await prompt(alice.client, threadId, 'Keep this', { attachments: [file.id] });
    await completion(alice.client, threadId, exchange.assistantNodeId);
    expect((await download(server, alice.ticket, file.id)).status).toBe(200);
    expect((await download(server, bob.ticket, file.id)).status).toBe(404);

    alice.client.send('CPP_THREAD_DELETE', { threadId });
    await alice.client.next('CPP_THREAD_DELETED');
    expect((await download(server, alice.ticket, file.id)).status).toBe(404);
  });

  it('is served by every server sharing the store and the ticket key, as the servers of a cluster do', async () => {
    const store = new MemoryStore();
    const ticketSecret = 'a shared key of at least thirty-two characters';
    const first = await fixture.start({ store, attachments: { ticketSecret } });
    const second = await startServer({ store, attachments: { ticketSecret } });
    const stranger = await startServer({ store, attachments: { ticketSecret: `another ${ticketSecret}` } });
    try {
      const { ticket } = await connectAs(ALICE);
      const file = await uploaded(first, ticket, 'shared.txt', text('seen everywhere'));

      const elsewhere = await download(second, ticket, file.id);
      expect([elsewhere.status, await elsewhere.text()]).toEqual([200, 'seen everywhere']);
      expect((await download(stranger, ticket, file.id)).status).toBe(401);
    } finally {
      await Promise.all([second.close(), stranger.close()]);
    }
  });

  it('imports a document with its files (base64 by SHA-256) as files of the new thread, and refuses one without their bytes', async () => {
    const server = await fixture.start();
    const { client, ticket } = await connectAs(ALICE);
    const file = await uploaded(server, ticket, 'kept.txt', text('kept'));
    const { threadId } = await openThread(client, { patches: true });
    const exchange = await prompt(client, threadId, 'Export me', { attachments: [file.id] });
    await completion(client, threadId, exchange.assistantNodeId);
    const sync = await requestSync(client, threadId);
    const exported = { format: 'cpp-thread', formatVersion: 1, exportedAt: Date.now(), thread: sync };
    const bob = await connectAs(BOB);

    // Without the bytes, and with bytes that are not the file's, nothing is imported.
    bob.client.send('CPP_THREAD_IMPORT', { format: 'cpp-thread', document: exported }, { id: 'no-bytes' });
    const missing = await expectError(bob.client, 'INVALID_FRAME', { refId: 'no-bytes' });
    expect(missing.message).toBe(
      `payload.document: thread 1: a message carries kept.txt (${file.id}), whose bytes the document does not hold, and which is no upload of yours that a prompt could name`,
    );
    const forged = { ...exported, files: { [file.sha256]: Buffer.from('forged').toString('base64') } };
    bob.client.send('CPP_THREAD_IMPORT', { format: 'cpp-thread', document: forged }, { id: 'forged' });
    const wrong = await expectError(bob.client, 'INVALID_FRAME', { refId: 'forged' });
    expect(wrong.message).toBe(
      'payload.document: thread 1: the bytes the document holds for kept.txt do not have its SHA-256',
    );

    // With them: the new thread's prompt carries a file of its own, of the same bytes, that its owner may read.
    const document = { ...exported, files: { [file.sha256]: Buffer.from('kept').toString('base64') } };
    bob.client.send('CPP_THREAD_IMPORT', { format: 'cpp-thread', document }, { id: 'with-bytes' });
    const [thread] = (await bob.client.next('CPP_THREADS_IMPORTED')).payload.threads;
    const copy = await requestSync(bob.client, thread!.threadId);
    const [carried] = Object.values(copy.nodes).find((node) => node.role === 'user')!.attachments!;
    expect({ ...carried, id: undefined }).toEqual({ ...file, id: undefined });
    expect(carried!.id).not.toBe(file.id);
    const served = await download(server, bob.ticket, carried!.id);
    expect(await served.text()).toBe('kept');
  });

  it('answers pages of the origins the session takes across origins (CORS), and refuses the preflight of others', async () => {
    const server = await fixture.start({ allowedOrigins: ['https://chat.example'] });
    const { ticket } = await connectAs(ALICE);
    const preflight = (origin: string) =>
      fetch(endpoint(server), {
        method: 'OPTIONS',
        headers: {
          Origin: origin,
          'Access-Control-Request-Method': 'POST',
          'Access-Control-Request-Headers': 'authorization',
        },
      });

    const allowed = await preflight('https://chat.example');
    expect([allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([204, 'https://chat.example']);
    expect(allowed.headers.get('access-control-allow-headers')).toBe('Authorization');
    expect((await preflight('https://evil.example')).status).toBe(403);

    const upload = await fetch(`${endpoint(server)}?name=a.txt`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ticket}`, Origin: 'https://chat.example' },
      body: 'from a page',
    });
    expect([upload.status, upload.headers.get('access-control-allow-origin')]).toEqual([201, 'https://chat.example']);
    const file = (await upload.json()) as Attachment;
    expect((await download(server, ticket, file.id)).headers.get('cross-origin-resource-policy')).toBe('cross-origin');
  });
});
