import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ConversationStore } from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { describeWithPostgres, TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import { temporaryDatabase, type TemporaryDatabase } from '../support/temporary-database.js';
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

  it('refuses an argument that is not a DID', async () => {
    database = temporaryDatabase();
    const { code, stderr } = await runImport([FIXTURE, '--did', 'alice', '--db', database.path]);
    expect(code).toBe(1);
    expect(stderr).toContain('--did alice is not a DID');
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
});

async function expectImported(store: ConversationStore): Promise<void> {
  try {
    const threads = await store.listThreads(ALICE, { limit: 200 });
    expect(threads.map(({ title, nodeCount }) => ({ title, nodeCount }))).toEqual([
      { title: 'Rivers of Europe', nodeCount: 7 },
      { title: 'Plotting with code', nodeCount: 2 },
      { title: 'Edited first prompt', nodeCount: 4 },
      { title: '', nodeCount: 0 },
    ]);
  } finally {
    await store.close();
  }
}
