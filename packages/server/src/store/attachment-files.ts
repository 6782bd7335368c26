import { randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const SHA256_PATTERN = /^[0-9a-f]{64}$/;
const PREFIX_PATTERN = /^[0-9a-f]{2}$/;
/** Where a file is written before it is complete and synced, in the folder so that its rename stays on one disk. */
const TEMP_FOLDER = 'tmp';

/**
 * Attachment bytes as files named by their SHA-256 (`<folder>/ab/abcdef…`), written with asynchronous I/O so that a
 * large file never holds the event loop. A file appears under its name only whole and synced (written to a temporary
 * file, synced, renamed), so a name is never a partial file; what may be left is a file no row names, or a temporary
 * one, which `SqliteAttachments` sweeps. Which files are kept is the database's business, not this folder's.
 */
export class AttachmentFiles {
  constructor(readonly folder: string) {}

  /** Writes the file unless it is there already, whole: the same bytes are stored once. */
  async write(sha256: string, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(sha256);
    if ((await sizeOf(path)) === bytes.length) return;
    const temp = join(this.folder, TEMP_FOLDER, randomUUID());
    await mkdir(dirname(temp), { recursive: true });
    await mkdir(dirname(path), { recursive: true });
    try {
      const handle = await open(temp, 'wx');
      try {
        await handle.writeFile(bytes);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, path);
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    await syncFolder(dirname(path));
  }

  /** The file's bytes, or `undefined` when it is not there. */
  async read(sha256: string): Promise<Uint8Array | undefined> {
    try {
      const bytes = await readFile(this.pathOf(sha256));
      return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** One `stat`: synchronous so that a transaction can ask it between its statements. */
  hasSync(sha256: string): boolean {
    try {
      statSync(this.pathOf(sha256));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  /** One `unlink`: synchronous so that it happens inside the transaction that found no row naming the file. */
  removeSync(sha256: string): void {
    rmSync(this.pathOf(sha256), { force: true });
  }

  /** The SHA-256 of every file in the folder. */
  async *names(): AsyncGenerator<string> {
    for (const prefix of await entries(this.folder)) {
      if (!PREFIX_PATTERN.test(prefix)) continue;
      for (const name of await entries(join(this.folder, prefix)))
        if (SHA256_PATTERN.test(name) && name.startsWith(prefix)) yield name;
    }
  }

  /** When the file was last written (ms), or `undefined` when it is gone. */
  async modifiedAt(sha256: string): Promise<number | undefined> {
    return (await statOf(this.pathOf(sha256)))?.mtimeMs;
  }

  /** Removes the temporary files last written before `before` (ms): writes a crash cut off. */
  async removeTempFilesBefore(before: number): Promise<void> {
    const folder = join(this.folder, TEMP_FOLDER);
    for (const name of await entries(folder)) {
      const modified = (await statOf(join(folder, name)))?.mtimeMs;
      if (modified !== undefined && modified < before) await rm(join(folder, name), { force: true });
    }
  }

  private pathOf(sha256: string): string {
    // The name comes from the server's own hash; checked anyway, as it becomes a path.
    if (!SHA256_PATTERN.test(sha256)) throw new Error(`not a SHA-256 in lowercase hex: ${sha256}`);
    return join(this.folder, sha256.slice(0, 2), sha256);
  }
}

async function sizeOf(path: string): Promise<number | undefined> {
  return (await statOf(path))?.size;
}

async function statOf(path: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    return await stat(path);
  } catch (error) {
    if (isMissing(error)) return undefined;
    throw error;
  }
}

async function entries(folder: string): Promise<string[]> {
  try {
    return await readdir(folder);
  } catch (error) {
    if (isMissing(error)) return [];
    throw error;
  }
}

/** A rename is durable once its folder is synced: without it a power cut could lose a file its committed row names. */
async function syncFolder(folder: string): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(folder, 'r');
  } catch (error) {
    // Windows opens no folder as a file; NTFS's rename is journaled there.
    if ((error as NodeJS.ErrnoException).code === 'EISDIR' || (error as NodeJS.ErrnoException).code === 'EPERM') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}
