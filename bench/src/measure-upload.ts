import { request as httpRequest } from 'node:http';
import { performance } from 'node:perf_hooks';
import { CPP_SESSION_PATH, CPP_SUBPROTOCOL } from '@promethea/cpp-protocol';
import WebSocket from 'ws';
import type { BenchContext } from './bench-context.js';
import { BenchProcess } from './bench-process.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { inTurn } from './in-turn.js';
import { median } from './latency-recorder.js';
import type { UploadServerConfig, UploadServerReady } from './upload-server-process.js';

const MIB = 1024 * 1024;
const KB = 1024;
/** The file: 10 MiB, and 20 clients sending one each at once. */
const FILE_BYTES = 10 * MIB;
const CONCURRENT_UPLOADS = 20;
/** Uploads timed per server and run, after the warm-up ones. */
const TIMED_UPLOADS = 8;
const WARM_UP_UPLOADS = 2;
/** CPP ÷ the bare server's time; RSS growth ÷ the bytes in flight. */
const TIME_RATIO_TARGET = 1.5;
const RSS_RATIO_TARGET = 2;
const ATTACHMENTS_PATH = '/v1/cpp/attachments';

type Kind = UploadServerConfig['kind'];
const KINDS: readonly Kind[] = ['cpp', 'bare', 'kept'];

interface UploadRun {
  /** Milliseconds per upload, each timed from the request's start to the answer's end. */
  cppMs: number[];
  bareMs: number[];
  keptMs: number[];
  /** CPP's peak resident set above its settled one while 20 clients upload, in bytes. */
  cppRssGrowth: number;
}

/**
 * Measure 8: uploads (issue 35). A 10 MiB text file POSTed to CPP's attachment endpoint (ticket, quota, hashing,
 * sniffing the whole file as UTF-8, the store's write) against the same bytes POSTed to a bare Node `http` server
 * that reads them to their end (the baseline), and to one that keeps them as durably as CPP's SQLite store
 * does (`kept`: SHA-256, a synced file renamed to it, the folder synced), which shows how much of CPP's time is the
 * keeping itself. The servers run at once and take each file in turn, the first of them rotating, so that a machine
 * shared with other work weighs on all alike. Then CPP's resident set while 20 clients upload 10 MiB each at once,
 * against the 200 MiB in flight. The memory is measured on SQLite, as the CLI runs: the memory store keeps every
 * file it is given in the heap, which would be the files kept, not the upload's cost. Each file differs (its first
 * line), so that every upload is written rather than found by its SHA-256.
 */
export async function measureUpload(context: BenchContext): Promise<{ figures: Figure[]; details: UploadRun[] }> {
  const runs: UploadRun[] = [];
  for (let run = 0; run < context.options.runs; run += 1) {
    context.log(
      `upload: ${TIMED_UPLOADS} uploads of 10 MiB to each of ${KINDS.join(', ')}, run ${run + 1}/${context.options.runs}`,
    );
    const servers = await Promise.all(KINDS.map((kind) => UploadServer.start({ kind, store: context.options.store })));
    const times: Record<Kind, number[]> = { cpp: [], bare: [], kept: [] };
    try {
      for (let index = 0; index < WARM_UP_UPLOADS + TIMED_UPLOADS; index += 1) {
        // Made before the clock starts: filling 10 MiB takes about 7 ms here, which is the bench's, not an upload's.
        const bytes = file(index);
        for (const server of inTurn(servers, index)) {
          const started = performance.now();
          await server.upload(bytes);
          if (index >= WARM_UP_UPLOADS) times[server.kind].push(performance.now() - started);
        }
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()));
    }
    context.log(`upload: ${CONCURRENT_UPLOADS} clients at once, cpp, run ${run + 1}/${context.options.runs}`);
    runs.push({ cppMs: times.cpp, bareMs: times.bare, keptMs: times.kept, cppRssGrowth: await concurrentRssGrowth() });
  }
  const inFlight = CONCURRENT_UPLOADS * FILE_BYTES;
  const cppMs = median(runs.flatMap((run) => run.cppMs));
  return {
    figures: [
      figure({
        id: 'upload.10mib.time',
        label: 'Upload of a 10 MiB file (median)',
        unit: 'ms',
        value: cppMs,
        baseline: { label: 'bare Node HTTP', value: median(runs.flatMap((run) => run.bareMs)) },
        target: ratioTarget('≤', TIME_RATIO_TARGET),
      }),
      figure({
        id: 'upload.10mib.time-kept',
        label: 'Upload of a 10 MiB file (median), against a bare server keeping it',
        unit: 'ms',
        value: cppMs,
        baseline: { label: 'bare Node HTTP, SHA-256 + synced file', value: median(runs.flatMap((run) => run.keptMs)) },
      }),
      figure({
        id: 'upload.concurrent.rss-growth',
        label: `Server RSS growth, ${CONCURRENT_UPLOADS} clients uploading 10 MiB each`,
        unit: 'KB',
        value: median(runs.map((run) => run.cppRssGrowth)) / KB,
        baseline: { label: 'bytes in flight', value: inFlight / KB },
        target: ratioTarget('≤', RSS_RATIO_TARGET),
      }),
    ],
    details: runs,
  };
}

async function concurrentRssGrowth(): Promise<number> {
  const server = await UploadServer.start({ kind: 'cpp', store: 'sqlite' });
  try {
    // One upload first, so that what loads with the first file (the sniffing libraries) is not counted.
    await server.upload(file(-1));
    const files = Array.from({ length: CONCURRENT_UPLOADS }, (_, index) => file(index));
    const settled = await server.process.request<number>('settledRss');
    await server.process.request('peakStart');
    await Promise.all(files.map((bytes) => server.upload(bytes)));
    const peak = await server.process.request<number>('peakStop');
    return peak - settled;
  } finally {
    await server.stop();
  }
}

/** 10 MiB of lines of text (what the server sniffs in full, the slowest type to take), its first line its own. */
function file(index: number): Buffer {
  const line = 'The quick brown fox jumps over the lazy dog; pivots happen mid-stream.\n';
  const bytes = Buffer.alloc(FILE_BYTES, line);
  bytes.write(`file ${index} ${Date.now()}\n`, 0);
  return bytes;
}

/** A server of the measure in its own process, and a client that uploads to it as the bench's load would. */
class UploadServer {
  private constructor(
    readonly process: BenchProcess<UploadServerReady>,
    readonly kind: Kind,
    private readonly ticket: string | undefined,
  ) {}

  static async start(config: UploadServerConfig): Promise<UploadServer> {
    const process = await BenchProcess.start<UploadServerReady>('./upload-server-process.js', [JSON.stringify(config)]);
    const ticket = config.kind === 'cpp' ? await ticketOf(process.info.port) : undefined;
    return new UploadServer(process, config.kind, ticket);
  }

  /** POSTs the bytes, as `fetch` of a file would, and resolves once the answer has come whole. */
  upload(bytes: Buffer): Promise<void> {
    const { port } = this.process.info;
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        { host: '127.0.0.1', port, path: `${ATTACHMENTS_PATH}?name=bench.txt`, method: 'POST' },
        (response) => {
          const pieces: Buffer[] = [];
          response.on('data', (piece: Buffer) => pieces.push(piece));
          response.on('end', () =>
            response.statusCode === 201
              ? resolve()
              : reject(new Error(`${this.kind} answered ${response.statusCode}: ${Buffer.concat(pieces)}`)),
          );
        },
      );
      request.setHeader('Content-Length', bytes.length);
      if (this.ticket) request.setHeader('Authorization', `Bearer ${this.ticket}`);
      request.on('error', reject);
      request.end(bytes);
    });
  }

  stop(): Promise<void> {
    return this.process.stop();
  }
}

/** A ticket from a session of a claimed DID (PROTOCOL.md §27.2), as a client asks for one before its uploads. */
async function ticketOf(port: number): Promise<string> {
  const socket = new WebSocket(`ws://127.0.0.1:${port}${CPP_SESSION_PATH}?did=did:example:bench`, [CPP_SUBPROTOCOL]);
  try {
    return await new Promise<string>((resolve, reject) => {
      socket.on('error', reject);
      socket.on('open', () =>
        socket.send(
          JSON.stringify({ type: 'CPP_ATTACHMENT_TICKET_REQUEST', timestamp: Date.now(), id: 'ticket', payload: {} }),
        ),
      );
      socket.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { type: string; payload: { ticket?: string } };
        if (frame.type === 'CPP_ATTACHMENT_TICKET' && frame.payload.ticket) resolve(frame.payload.ticket);
      });
    });
  } finally {
    socket.close();
  }
}
