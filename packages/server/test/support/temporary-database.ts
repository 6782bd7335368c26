import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TemporaryDatabase {
  /** A SQLite file path in a fresh folder; the file does not exist yet. */
  path: string;
  /** Deletes the folder with the database and its WAL files. */
  remove(): void;
}

export function temporaryDatabase(): TemporaryDatabase {
  const folder = mkdtempSync(join(tmpdir(), 'cpp-server-test-'));
  return { path: join(folder, 'cpp.sqlite'), remove: () => rmSync(folder, { recursive: true, force: true }) };
}
