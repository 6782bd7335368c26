import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { OLDEST_TITLE, RARE_WORD, writeSyntheticHistory } from '../src/synthetic-history.js';

const CLI = fileURLToPath(new URL('../../packages/server/dist/cli/cpp-server.js', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'cpp-synthetic-import-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

describe('a synthetic history', () => {
  it('of 26 MB imports with a JavaScript heap of 48 MB: the file is never held whole', async () => {
    const file = join(folder, 'conversations.json');
    const database = join(folder, 'cpp.sqlite');
    const bytes = await writeSyntheticHistory(file, { conversations: 2_000, messages: 20 });
    expect(bytes).toBeGreaterThan(25_000_000);

    // Parsed whole, the file's objects alone take several times the heap allowed here.
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--max-old-space-size=48',
      CLI,
      'import',
      file,
      '--did',
      'did:example:heavy',
      '--db',
      database,
    ]);
    expect(stdout).toMatch(/^imported 2000 threads \(chatgpt\)/);
    const store = SqliteStore.open(database);
    try {
      expect(await store.countThreads('did:example:heavy', 5_000)).toBe(2_000);
      const [oldest] = await store.searchThreads('did:example:heavy', [RARE_WORD], 5);
      expect(oldest?.title).toBe(OLDEST_TITLE);
    } finally {
      await store.close();
    }
  }, 180_000);
});
