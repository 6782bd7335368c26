import { randomUUID } from 'node:crypto';
import { rmSync, statSync } from 'node:fs';
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

const SHA256_PATTERN = /^[0-9a-f]{64}$/;
const PREFIX_PATTERN = /^[0-9a-f]{2}$/;
/** Where a file is written before it is complete and synced, in the folder so that its rename stays on one disk. */
const TEMP_FOLDER = 'tmp';
/**
 * How far the bytes written may run ahead of the disk before the upload is asked to wait (its request pauses): the
 * memory an upload holds in the store, whatever its size.
 */
const QUEUED_BYTES_MAX = 1024 * 1024;
/**
 * How many bytes written since the last sync make an upload start another while its bytes still arrive (one at a
 * time), so that the sync before its rename has little left to write, not the whole file.
 */
const SYNC_EVERY_BYTES = 1024 * 1024;

/**
 * Attachment bytes as files named by their SHA-256 (`<folder>/ab/abcdef…`), written with asynchronous I/O so that a
 * large file never holds the event loop. A file appears under its name only whole and synced (written to a temporary
 * file, synced, renamed), so a name is never a partial file; what may be left is a file no row names, or a temporary
 * one, which `SqliteAttachments` sweeps. Which files are kept is the database's business, not this folder's.
 */
export class AttachmentFiles {
  constructor(readonly folder: string) {}

  /**
   * A file to write as its bytes arrive, in the temporary folder until it is kept under its name. It is opened while
   * the first bytes are queued, so that an upload does not wait for the disk before its body is read.
   */
  begin(): AttachmentFileWriter {
    const temp = join(this.folder, TEMP_FOLDER, randomUUID());
    const opened = mkdir(dirname(temp), { recursive: true }).then(() => open(temp, 'wx'));
    return new AttachmentFileWriter(temp, opened, (sha256) => this.pathOf(sha256));
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

/**
 * A file being written as its bytes arrive: each piece is queued and written in the background (several at once
 * with one `writev`), and a sync runs while they come (another as soon as one ends, once `SYNC_EVERY_BYTES` more are
 * written), so that when the last byte has come only what arrived during the last one is left to sync.
 */
export class AttachmentFileWriter {
  private queued: Uint8Array[] = [];
  private queuedBytes = 0;
  /** The loop writing the queue, while one runs. */
  private writing: Promise<void> | undefined;
  /** The sync running while bytes arrive, if one does; it keeps its failure in `failure`. */
  private syncing: Promise<void> | undefined;
  private failure: unknown;
  private written = 0;
  private syncedAt = 0;
  private renamed = false;
  /** Set once the last byte has come (`keep`, `close`): no sync starts any more while bytes arrive. */
  private ended = false;
  private closed = false;

  constructor(
    /** The temporary file's path. */
    readonly temp: string,
    private readonly opened: Promise<FileHandle>,
    private readonly pathOf: (sha256: string) => string,
  ) {
    opened.catch((error: unknown) => this.fail(error));
  }

  /** Queues the bytes; waits only while more than `QUEUED_BYTES_MAX` are not written yet. Throws a write's failure. */
  async write(bytes: Uint8Array): Promise<void> {
    this.throwFailure();
    this.queued.push(bytes);
    this.queuedBytes += bytes.length;
    this.writing ??= this.writeQueue();
    if (this.queuedBytes > QUEUED_BYTES_MAX) await this.writing;
    this.throwFailure();
  }

  /**
   * Makes the bytes written the file named by their SHA-256: synced, renamed, the folder synced. When a file of that
   * name and size is there already, the same bytes are kept once: this one stays temporary, for `close` to remove (or
   * for a later call to rename, should the other go in between).
   */
  async keep(sha256: string): Promise<void> {
    await this.writing;
    this.throwFailure();
    const path = this.pathOf(sha256);
    if ((await sizeOf(path)) === this.written) return;
    if (this.renamed) throw new Error(`the file of ${sha256} was removed after it was written`);
    this.ended = true;
    // Beside a sync still running, not after it: the file's is the last word, and the running one's failure counts.
    await Promise.all([this.syncing, (await this.opened).sync()]);
    this.throwFailure();
    await mkdir(dirname(path), { recursive: true });
    await rename(this.temp, path);
    this.renamed = true;
    await syncFolder(dirname(path));
  }

  /** Closes the file, after the writes and syncs under way, and removes it unless it was kept. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.ended = true;
    this.queued = [];
    await this.writing;
    await this.syncing;
    await (await this.opened.catch(() => undefined))?.close();
    if (!this.renamed) await rm(this.temp, { force: true });
  }

  private async writeQueue(): Promise<void> {
    try {
      while (this.queued.length > 0 && this.failure === undefined) {
        const pieces = this.queued;
        this.queued = [];
        this.queuedBytes = 0;
        await writeAll(await this.opened, pieces);
        this.written += pieces.reduce((length, piece) => length + piece.length, 0);
        this.syncWhileWriting();
      }
    } catch (error) {
      this.fail(error);
    } finally {
      this.writing = undefined;
    }
  }

  private syncWhileWriting(): void {
    if (this.syncing || this.ended || this.written - this.syncedAt < SYNC_EVERY_BYTES) return;
    this.syncedAt = this.written;
    this.syncing = this.opened
      .then((handle) => handle.datasync())
      .catch((error: unknown) => this.fail(error))
      .finally(() => {
        this.syncing = undefined;
        this.syncWhileWriting();
      });
  }

  private fail(error: unknown): void {
    this.failure ??= error;
  }

  private throwFailure(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Writes every piece, again from where a short write stopped (which a full disk may cause). */
async function writeAll(handle: FileHandle, pieces: Uint8Array[]): Promise<void> {
  let rest = pieces;
  while (rest.length > 0) {
    let { bytesWritten } = await handle.writev(rest);
    if (bytesWritten === 0) throw new Error('the attachment file took no bytes');
    while (rest.length > 0 && bytesWritten >= rest[0]!.length) {
      bytesWritten -= rest[0]!.length;
      rest = rest.slice(1);
    }
    if (rest.length > 0) rest = [rest[0]!.subarray(bytesWritten), ...rest.slice(1)];
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
