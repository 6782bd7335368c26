import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ConversationStore } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openImportReader, type ReadBatch } from '../../dist/cli/import-reader.js';
import { jsonArrayItems } from '../../src/threads/json-array-items.js';
import { importThreadStream, readThreadBatches } from '../../src/threads/thread-importer.js';
import { describeWithPostgres, TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import { temporaryDatabase, type TemporaryDatabase } from '../support/temporary-database.js';
import { pngImage } from '../support/test-files.js';
import { writeZip } from '../support/zip-file.js';

// Each test starts the CLI once to three times: a process of its own, slow on a loaded machine.
vi.setConfig({ testTimeout: 90_000 });

const CLI = fileURLToPath(new URL('../../dist/cli/cpp-server.js', import.meta.url));
const FIXTURE = fileURLToPath(new URL('../../../protocol/test/fixtures/chatgpt-conversations.json', import.meta.url));
const ALICE = 'did:example:alice';

function runImport(args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, 'import', ...args], (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let database: TemporaryDatabase;
afterEach(() => database?.remove());

/** A ChatGPT export .zip of `files`, imported for ALICE into a new database without a word on stderr: its store. */
async function importedZip(files: Record<string, string | Buffer>): Promise<SqliteStore> {
  database = temporaryDatabase();
  const archive = `${database.path}.zip`;
  writeZip(archive, files);
  const { code, stderr } = await runImport([archive, '--did', ALICE, '--db', database.path]);
  expect(stderr).toBe('');
  expect(code).toBe(0);
  return SqliteStore.open(database.path);
}

describe('cpp-server import into SQLite', () => {
  it('imports every conversation of a ChatGPT export as a thread of --did, recognising the format', async () => {
    database = temporaryDatabase();
    const { code, stdout } = await runImport([FIXTURE, '--did', ALICE, '--db', database.path]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^imported 4 threads \(chatgpt\) for did:example:alice into SQLite at /);
    await expectImported(SqliteStore.open(database.path));
  });

  it('imports a CPP JSON export given as such, and refuses a malformed file with its reason, importing nothing', async () => {
    database = temporaryDatabase();
    const broken = `${database.path}.json`;
    writeFileSync(
      broken,
      JSON.stringify([{ title: 'Broken', mapping: { a: { message: null, parent: 'nowhere', children: [] } } }]),
    );
    const refused = await runImport([broken, '--did', ALICE, '--db', database.path]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      'conversation 1 (Broken): node a names parent nowhere, which is not in the mapping; nothing was imported',
    );

    const exported = `${database.path}.cpp.json`;
    const graph = {
      threadId: 'thread_original',
      rootNodeId: 'msg_r',
      activeHeadMessageId: 'msg_r',
      version: 4,
      title: 'Saved',
      nodes: {
        msg_r: {
          id: 'msg_r',
          parentId: null,
          childrenIds: [],
          role: 'user',
          content: 'Kept',
          status: 'completed',
          createdAt: 5,
        },
      },
    };
    writeFileSync(exported, JSON.stringify({ format: 'cpp-thread', formatVersion: 1, exportedAt: 10, thread: graph }));
    const { code, stdout } = await runImport([
      exported,
      '--did',
      ALICE,
      '--db',
      database.path,
      '--format',
      'cpp-thread',
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^imported 1 thread \(cpp-thread\)/);
    const store = SqliteStore.open(database.path);
    try {
      expect(
        (await store.listThreads(ALICE, { limit: 200 })).map(({ title, nodeCount }) => ({ title, nodeCount })),
      ).toEqual([{ title: 'Saved', nodeCount: 1 }]);
    } finally {
      await store.close();
    }
  });

  it('imports the conversations.json of a ChatGPT export .zip as downloaded', async () => {
    database = temporaryDatabase();
    const archive = `${database.path}.zip`;
    writeZip(archive, {
      'chat.html': '<html></html>',
      'user-123/conversations.json': readFileSync(FIXTURE),
      'message_feedback.json': '[]',
    });
    const { code, stdout, stderr } = await runImport([archive, '--did', ALICE, '--db', database.path]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^imported 4 threads \(chatgpt\) for did:example:alice into SQLite at /);
    await expectImported(SqliteStore.open(database.path));

    writeZip(archive, { 'chat.html': '<html></html>' });
    const refused = await runImport([archive, '--did', ALICE, '--db', database.path]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('holds no conversations.json: is it a ChatGPT data export?');
  });

  it('imports the files of a CPP JSON export (base64 by SHA-256) as files of the new thread', async () => {
    database = temporaryDatabase();
    const path = `${database.path}.cpp.json`;
    writeFileSync(path, JSON.stringify(exportWithFiles()));
    const { code, stderr } = await runImport([path, '--did', ALICE, '--db', database.path]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    await expectImportedFiles(SqliteStore.open(database.path));
  });

  it('brings the images of a ChatGPT export .zip along: each message carries the images its parts point at', async () => {
    const photo = pngImage(4, 3);
    const store = await importedZip({
      'conversations.json': JSON.stringify([chatGptConversationWithImages()]),
      'file-Photo123-holiday.png': Buffer.from(photo),
      // Another image whose id begins the same way is not this one's; an image the archive lacks is left out.
      'file-Photo1234-other.png': Buffer.from(pngImage(1, 1)),
      'dalle-generations/file-Drawn9.webp': Buffer.from('not an image at all\u0000'),
    });
    try {
      const [thread] = await store.listThreads(ALICE, { limit: 10 });
      const loaded = await store.loadThread(thread!.threadId);
      const [prompt] = Object.values(loaded!.graph.nodes).filter((node) => node.role === 'user');
      expect(prompt!.content).toBe('What is in this photo?');
      expect(
        prompt!.attachments?.map(({ name, mediaType, width, height, size }) => [name, mediaType, width, height, size]),
      ).toEqual([['file-Photo123-holiday.png', 'image/png', 4, 3, photo.length]]);
      expect(await store.attachmentBytes(prompt!.attachments![0]!.sha256)).toEqual(new Uint8Array(photo));
      expect((await store.loadAttachments([prompt!.attachments![0]!.id]))[0]?.threadId).toBe(thread!.threadId);
    } finally {
      await store.close();
    }
  });

  it('keeps a ChatGPT prompt of an image alone whose image the .zip holds, and leaves out one whose image it lacks', async () => {
    const store = await importedZip({
      'conversations.json': JSON.stringify([chatGptConversationOfImagesAlone()]),
      'file-Alone1-cat.png': Buffer.from(pngImage(5, 4)),
    });
    try {
      const [thread] = await store.listThreads(ALICE, { limit: 10 });
      const { graph } = (await store.loadThread(thread!.threadId))!;
      const shown = (id: string | null): unknown[] => {
        const node = id === null ? undefined : graph.nodes[id];
        if (!node) return [];
        const files = node.attachments?.map(({ name, mediaType, width }) => [name, mediaType, width]);
        return [[node.role, node.content, ...(files ? [files] : [])], ...node.childrenIds.flatMap(shown)];
      };
      // The prompt whose image came is a user node of no text carrying it; the one whose image did not is left
      // out, its answer hanging from the answer before it.
      expect(shown(graph.rootNodeId)).toEqual([
        ['user', 'Look at these'],
        ['assistant', 'Nice.'],
        ['user', '', [['file-Alone1-cat.png', 'image/png', 5]]],
        ['assistant', 'A cat.'],
        ['assistant', 'Nothing there.'],
      ]);
      expect(graph.nodes[graph.activeHeadMessageId!]?.content).toBe('Nothing there.');
    } finally {
      await store.close();
    }
  });

  it('imports nothing from a file that breaks off after more conversations than one batch holds', async () => {
    database = temporaryDatabase();
    const conversation = JSON.parse(readFileSync(FIXTURE, 'utf8'))[0];
    const cut = `${database.path}.json`;
    writeFileSync(cut, `[${Array.from({ length: 600 }, () => JSON.stringify(conversation)).join(',')},{"title":"cut`);
    const { code, stderr } = await runImport([cut, '--did', ALICE, '--db', database.path]);
    expect(code).toBe(1);
    expect(stderr).toMatch(/the JSON document ends early, after \d+ bytes; nothing was imported/);
    const store = SqliteStore.open(database.path);
    try {
      expect(await store.countThreads(ALICE, 10)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('stores what reading the file in this process would, though a thread of its own reads it', async () => {
    database = temporaryDatabase();
    const path = `${database.path}.json`;
    // More conversations than a batch holds (64), the fixture's kinds of message among them.
    writeFileSync(
      path,
      JSON.stringify(Array.from({ length: 40 }, () => JSON.parse(readFileSync(FIXTURE, 'utf8'))).flat()),
    );
    const { code } = await runImport([path, '--did', ALICE, '--db', database.path]);
    expect(code).toBe(0);
    const read = SqliteStore.open(`${database.path}.here`);
    const here = await importThreadStream(
      read,
      ALICE,
      readThreadBatches(jsonArrayItems(createReadStream(path)), { now: Date.now() }),
    );
    expect(here).toEqual({ format: 'chatgpt', threads: 160 });
    const stored = await storedThreads(SqliteStore.open(database.path));
    expect(stored).toHaveLength(160);
    expect(stored).toEqual(await storedThreads(read));
  });

  it('imports nothing from a file with a malformed conversation after more than one batch, and says which', async () => {
    database = temporaryDatabase();
    const conversation = JSON.parse(readFileSync(FIXTURE, 'utf8'))[0];
    const broken = { title: 'Broken', mapping: { a: { message: null, parent: 'nowhere', children: [] } } };
    const path = `${database.path}.json`;
    writeFileSync(path, JSON.stringify([...Array.from({ length: 150 }, () => conversation), broken, conversation]));
    const { code, stderr } = await runImport([path, '--did', ALICE, '--db', database.path]);
    expect(code).toBe(1);
    expect(stderr).toContain(
      'conversation 151 (Broken): node a names parent nowhere, which is not in the mapping; nothing was imported',
    );
    const store = SqliteStore.open(database.path);
    try {
      expect(await store.countThreads(ALICE, 10)).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('refuses an argument that is not a DID', async () => {
    database = temporaryDatabase();
    const { code, stderr } = await runImport([FIXTURE, '--did', 'alice', '--db', database.path]);
    expect(code).toBe(1);
    expect(stderr).toContain('--did alice is not a DID');
  });
});

describe('openImportReader (the thread that reads for cpp-server import)', () => {
  it('posts the threads a batch at a time, with how far into the file it has read for the progress line', async () => {
    database = temporaryDatabase();
    const path = `${database.path}.json`;
    writeFileSync(
      path,
      JSON.stringify(Array.from({ length: 50 }, () => JSON.parse(readFileSync(FIXTURE, 'utf8'))).flat()),
    );
    const reader = await openImportReader(path, undefined);
    expect(reader).toMatchObject({ name: path, size: statSync(path).size });
    const batches: ReadBatch[] = [];
    for await (const batch of reader.batches) batches.push(batch);
    expect(batches.map(({ format, items, threads }) => [format, items, threads.length])).toEqual([
      ['chatgpt', 64, 64],
      ['chatgpt', 128, 64],
      ['chatgpt', 192, 64],
      ['chatgpt', 200, 8],
    ]);
    const bytesRead = batches.map((batch) => batch.bytesRead);
    expect(bytesRead).toEqual([...bytesRead].sort((a, b) => a - b));
    expect(bytesRead.at(-1)).toBe(reader.size);
  });

  it('rejects with what opening the file threw, and ends its thread when closed before it is read', async () => {
    database = temporaryDatabase();
    await expect(openImportReader(`${database.path}.missing.json`, undefined)).rejects.toThrow(/ENOENT/);
    const reader = await openImportReader(FIXTURE, 'chatgpt');
    await reader.close();
  });
});

describeWithPostgres('cpp-server import into PostgreSQL', () => {
  const schemas = useTestSchemas();

  it('imports into the schema the flags name', async () => {
    const schema = schemas.create();
    const { code, stdout } = await runImport([
      FIXTURE,
      '--did',
      ALICE,
      '--store',
      'postgres',
      '--database-url',
      TEST_DATABASE_URL,
      '--database-schema',
      schema,
    ]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/into PostgreSQL at /);
    await expectImported(await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema }));
  });

  it('imports the files of a CPP JSON export into PostgreSQL', async () => {
    const schema = schemas.create();
    database = temporaryDatabase();
    const path = `${database.path}.cpp.json`;
    writeFileSync(path, JSON.stringify(exportWithFiles()));
    const flags = ['--store', 'postgres', '--database-url', TEST_DATABASE_URL, '--database-schema', schema];
    const { code, stderr } = await runImport([path, '--did', ALICE, ...flags]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    await expectImportedFiles(await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema }));
  });
});

const IMAGE = pngImage(2, 2);
const IMAGE_SHA256 = createHash('sha256').update(IMAGE).digest('hex');

/** A CPP JSON export whose two prompts (versions of one another) carry the same image, its bytes held once. */
function exportWithFiles() {
  const file = {
    id: 'att_original',
    name: 'plot.png',
    mediaType: 'image/png',
    size: IMAGE.length,
    sha256: IMAGE_SHA256,
    width: 2,
    height: 2,
  };
  const prompt = (id: string, content: string) => ({
    id,
    parentId: null,
    childrenIds: [],
    role: 'user',
    content,
    status: 'completed',
    createdAt: 5,
    attachments: [file],
  });
  return {
    format: 'cpp-thread',
    formatVersion: 1,
    exportedAt: 10,
    thread: {
      threadId: 'thread_original',
      rootNodeId: 'msg_b',
      activeHeadMessageId: 'msg_b',
      version: 3,
      title: 'With a file',
      nodes: { msg_a: prompt('msg_a', 'Look'), msg_b: prompt('msg_b', 'Look again') },
    },
    files: { [IMAGE_SHA256]: Buffer.from(IMAGE).toString('base64') },
  };
}

async function expectImportedFiles(store: ConversationStore): Promise<void> {
  try {
    const [thread] = await store.listThreads(ALICE, { limit: 10 });
    const loaded = await store.loadThread(thread!.threadId);
    const carried = Object.values(loaded!.graph.nodes).map((node) => node.attachments);
    expect(carried).toHaveLength(2);
    const [file] = carried[0]!;
    expect(carried[1]).toEqual([file]);
    expect(file).toMatchObject({ name: 'plot.png', mediaType: 'image/png', sha256: IMAGE_SHA256, width: 2 });
    expect(file!.id).not.toBe('att_original');
    expect(await store.attachmentBytes(IMAGE_SHA256)).toEqual(new Uint8Array(IMAGE));
    expect((await store.loadAttachments([file!.id]))[0]?.threadId).toBe(thread!.threadId);
  } finally {
    await store.close();
  }
}

/** A ChatGPT conversation of one prompt of text, then two of an image alone: the archive holds the first image. */
function chatGptConversationOfImagesAlone() {
  const image = (id: string) => ({ content_type: 'image_asset_pointer', asset_pointer: `sediment://${id}` });
  const turns: Array<[string, 'user' | 'assistant', unknown[]]> = [
    ['a', 'user', ['Look at these']],
    ['b', 'assistant', ['Nice.']],
    ['c', 'user', [image('file-Alone1'), '']],
    ['d', 'assistant', ['A cat.']],
    ['e', 'user', [image('file-Gone2')]],
    ['f', 'assistant', ['Nothing there.']],
  ];
  const mapping = Object.fromEntries(
    turns.map(([key, role, parts], index) => [
      key,
      {
        parent: turns[index - 1]?.[0] ?? null,
        children: turns[index + 1] ? [turns[index + 1]![0]] : [],
        message: {
          author: { role },
          create_time: index + 1,
          content: { content_type: role === 'user' ? 'multimodal_text' : 'text', parts },
        },
      },
    ]),
  );
  return { title: 'Pictures', create_time: 1, update_time: 6, current_node: 'f', mapping };
}

/** A ChatGPT conversation whose prompt shows an image (and one the archive lacks) beside its text. */
function chatGptConversationWithImages() {
  const image = (id: string) => ({
    content_type: 'image_asset_pointer',
    asset_pointer: `file-service://${id}`,
    width: 4,
    height: 3,
  });
  return {
    title: 'Holiday',
    create_time: 1,
    update_time: 2,
    current_node: 'b',
    mapping: {
      a: {
        parent: null,
        children: ['b'],
        message: {
          author: { role: 'user' },
          create_time: 1,
          content: {
            content_type: 'multimodal_text',
            parts: [image('file-Photo123'), image('file-Missing7'), image('file-Drawn9'), 'What is in this photo?'],
          },
        },
      },
      b: {
        parent: 'a',
        children: [],
        message: {
          author: { role: 'assistant' },
          create_time: 2,
          content: { content_type: 'text', parts: ['A beach.'] },
        },
      },
    },
  };
}

async function expectImported(store: ConversationStore): Promise<void> {
  try {
    const threads = await store.listThreads(ALICE, { limit: 200 });
    expect(threads.map(({ title, nodeCount }) => ({ title, nodeCount }))).toEqual([
      { title: 'Rivers of Europe', nodeCount: 7 },
      { title: 'Plotting with code', nodeCount: 2 },
      { title: 'Edited first prompt', nodeCount: 4 },
      { title: '', nodeCount: 0 },
    ]);
    // The code run of 'Plotting with code' is kept as the answer's tool call, with its result (PROTOCOL.md §25.5).
    const plotting = await store.loadThread(threads[1]!.threadId);
    const answer = Object.values(plotting!.graph.nodes).find((node) => node.role === 'assistant');
    expect(answer?.toolCalls).toMatchObject([
      { toolName: 'python', state: 'output-available', input: '{"code":"print(1)"}', output: 'print(1)' },
    ]);
  } finally {
    await store.close();
  }
}

/** Every thread of ALICE, newest first, its ids (new at each import) numbered in the order they first appear. */
async function storedThreads(store: ConversationStore): Promise<unknown[]> {
  try {
    const threads = [];
    for (const { threadId } of await store.listThreads(ALICE, { limit: 200 }))
      threads.push(await store.loadThread(threadId));
    const ids = new Map<string, string>();
    const numbered = JSON.stringify(threads).replace(/\b(msg|thread|call|att)_[0-9A-Z]{26}\b/g, (id, kind: string) => {
      if (!ids.has(id)) ids.set(id, `${kind}_${ids.size}`);
      return ids.get(id)!;
    });
    return JSON.parse(numbered);
  } finally {
    await store.close();
  }
}
