import { createReadStream } from 'node:fs';
import { open as openFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import yauzl from 'yauzl';
import type { ArchiveFiles } from '../threads/import-files.js';

/** The bytes of a document to import, read as they are needed. */
export interface ImportSource {
  bytes: AsyncIterable<Buffer>;
  /** The document's size in bytes (uncompressed), for progress. */
  size: number;
  /** How many of them have been read so far. */
  readonly bytesRead: number;
  /** What is read, for messages: the file, or the file inside the archive. */
  name: string;
  close(): void;
}

/** The other files of the archive a document came in (a ChatGPT export's images). */
export interface ImportArchive {
  file: ArchiveFiles;
  close(): void;
}

/** What a ChatGPT data export's archive holds the conversations in. */
const CHATGPT_CONVERSATIONS = 'conversations.json';
const ZIP_SIGNATURE = Buffer.from('PK\x03\x04', 'latin1');

/**
 * The document in `path`: the file itself, or, when it is a zip archive (a ChatGPT data export as downloaded), its
 * `conversations.json`, inflated as it is read.
 */
export async function openImportSource(path: string): Promise<ImportSource> {
  if (await isZip(path)) return openZipEntry(path);
  const stream = createReadStream(path, { highWaterMark: 1 << 20 });
  return counted(stream, (await stat(path)).size, path);
}

/** The files of the archive `path` is, when it is a zip archive (whose document `openImportSource` reads). */
export async function openImportArchive(path: string): Promise<ImportArchive | undefined> {
  return (await isZip(path)) ? openArchive(path) : undefined;
}

async function isZip(path: string): Promise<boolean> {
  const file = await openFile(path, 'r');
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(ZIP_SIGNATURE.length), 0, ZIP_SIGNATURE.length, 0);
    return bytesRead === ZIP_SIGNATURE.length && buffer.equals(ZIP_SIGNATURE);
  } finally {
    await file.close();
  }
}

function openZipEntry(path: string): Promise<ImportSource> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true }, (openError, zip) => {
      if (openError) return reject(new Error(`${path} is not a readable zip archive: ${openError.message}`));
      zip.on('error', reject);
      zip.on('end', () => reject(new Error(`${path} holds no ${CHATGPT_CONVERSATIONS}: is it a ChatGPT data export?`)));
      zip.on('entry', (entry: yauzl.Entry) => {
        if (basename(entry.fileName) !== CHATGPT_CONVERSATIONS) return zip.readEntry();
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError) return reject(streamError);
          resolve(counted(stream, entry.uncompressedSize, `${entry.fileName} in ${path}`, () => zip.close()));
        });
      });
      zip.readEntry();
    });
  });
}

/**
 * The files of a zip archive by the id their names begin with, as a ChatGPT export names its images (`file-…` then
 * the original name): the archive's directory is read once, and a file's bytes when it is asked for.
 */
function openArchive(path: string): Promise<ImportArchive> {
  return new Promise((resolve, reject) => {
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (openError, zip) => {
      if (openError) return reject(new Error(`${path} is not a readable zip archive: ${openError.message}`));
      const entries: yauzl.Entry[] = [];
      zip.on('error', reject);
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) entries.push(entry);
        zip.readEntry();
      });
      zip.on('end', () =>
        resolve({
          file: async (fileId) => {
            const entry = entries.find((candidate) => namedFor(basename(candidate.fileName), fileId));
            return entry && { name: basename(entry.fileName), bytes: await readEntry(zip, entry) };
          },
          close: () => zip.close(),
        }),
      );
      zip.readEntry();
    });
  });
}

/** `file-abc-photo.png` and `file-abc.png` are file-abc's; `file-abcd.png` is not. */
function namedFor(fileName: string, fileId: string): boolean {
  return fileName.startsWith(fileId) && !/[A-Za-z0-9]/.test(fileName.charAt(fileId.length));
}

function readEntry(zip: yauzl.ZipFile, entry: yauzl.Entry): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    zip.openReadStream(entry, (error, stream) => {
      if (error) return reject(error);
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', reject);
      stream.on('end', () => resolve(Buffer.concat(chunks)));
    });
  });
}

/** `release`: what else to let go of once the stream is done with. */
function counted(stream: Readable, size: number, name: string, release = () => {}): ImportSource {
  let bytesRead = 0;
  async function* bytes(): AsyncGenerator<Buffer> {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      bytesRead += chunk.length;
      yield chunk;
    }
  }
  return {
    bytes: bytes(),
    size,
    get bytesRead() {
      return bytesRead;
    },
    name,
    close() {
      stream.destroy();
      release();
    },
  };
}
