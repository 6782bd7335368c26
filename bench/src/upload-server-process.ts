import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CPPServer, DemoProvider, MemoryStore, type ConversationStore } from '@promethea/cpp-server';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { serveRequests } from './bench-process.js';

/**
 * Which server takes the uploads: CPP's attachment endpoint, a bare Node HTTP server that reads the bytes, or one that
 * keeps them (`kept`).
 */
export interface UploadServerConfig {
  kind: 'cpp' | 'bare' | 'kept';
  store: 'sqlite' | 'memory';
}

export interface UploadServerReady {
  port: number;
}

/** How often the resident set is sampled while uploads run: the peak is what the measure reports. */
const RSS_SAMPLE_MS = 2;

const config = JSON.parse(process.argv[2]!) as UploadServerConfig;
const directory = mkdtempSync(join(tmpdir(), 'cpp-bench-upload-'));
const store: ConversationStore =
  config.store === 'sqlite' ? SqliteStore.open(join(directory, 'bench.sqlite')) : new MemoryStore();
const server = config.kind === 'cpp' ? await startCpp() : await startBare(config.kind === 'kept');
let sampler: { timer: NodeJS.Timeout; peak: number } | undefined;

serveRequests({ port: server.port } satisfies UploadServerReady, {
  /** The resident set after collecting garbage: where a measure starts from. */
  settledRss: async () => {
    for (let round = 0; round < 4; round += 1) {
      globalThis.gc?.();
      await nextTurn();
    }
    return process.memoryUsage.rss();
  },
  peakStart: () => {
    const started = { peak: process.memoryUsage.rss(), timer: setInterval(() => sample(), RSS_SAMPLE_MS) };
    sampler = started;
  },
  peakStop: () => {
    if (!sampler) throw new Error('peakStart was not called');
    clearInterval(sampler.timer);
    sample();
    const { peak } = sampler;
    sampler = undefined;
    return peak;
  },
  stop: async () => {
    await server.close();
    await store.close();
    rmSync(directory, { recursive: true, force: true });
  },
});

function sample(): void {
  if (sampler) sampler.peak = Math.max(sampler.peak, process.memoryUsage.rss());
}

async function startCpp(): Promise<{ port: number; close(): Promise<void> }> {
  // Claimed identities (the bench's connection names its DID), and no daily quota: the bench uploads gigabytes.
  const cpp = new CPPServer({
    port: 0,
    host: '127.0.0.1',
    store,
    model: new DemoProvider(),
    attachments: { bytesPerDay: Number.MAX_SAFE_INTEGER },
  });
  await cpp.ready;
  return { port: cpp.port, close: () => cpp.close() };
}

/**
 * The baselines: the same bytes POSTed to a plain `http` server that reads them to their end (or, `keep`, keeps them)
 * and answers 201.
 */
async function startBare(keep: boolean): Promise<{ port: number; close(): Promise<void> }> {
  const bare = createServer((request, response) => {
    (keep ? kept(request) : read(request)).then((length) => {
      const body = JSON.stringify({ size: length });
      response.writeHead(201, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      response.end(body);
    });
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const address = bare.address();
  if (address === null || typeof address === 'string') throw new Error('the bare server has no port');
  return {
    port: address.port,
    close: () => new Promise<void>((resolve) => bare.close(() => resolve())),
  };
}

/** The body's length, its bytes dropped. */
function read(request: IncomingMessage): Promise<number> {
  return new Promise((resolve) => {
    let length = 0;
    request.on('data', (chunk: Buffer) => {
      length += chunk.length;
    });
    request.on('end', () => resolve(length));
  });
}

/**
 * The body kept as plain Node code would keep it with the durability of CPP's SQLite store (docs/operations.md):
 * hashed with SHA-256 and written as it comes, the file synced, renamed to its hash, and the folder synced, before
 * the answer. What CPP does besides (the ticket, the quota, the UTF-8 check and sniffing, the row) is not here.
 */
async function kept(request: IncomingMessage): Promise<number> {
  const temp = join(directory, randomUUID());
  const hash = createHash('sha256');
  let length = 0;
  const file = await open(temp, 'wx');
  try {
    for await (const chunk of request as AsyncIterable<Buffer>) {
      hash.update(chunk);
      length += chunk.length;
      await file.write(chunk);
    }
    await file.sync();
  } finally {
    await file.close();
  }
  await rename(temp, join(directory, hash.digest('hex')));
  const folder = await open(directory, 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
  return length;
}
