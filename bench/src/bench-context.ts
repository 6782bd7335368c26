import { CPP_SESSION_PATH } from '@promethea/cpp-protocol';
import { BenchProcess } from './bench-process.js';
import type { StreamsRequest, StreamsStarted } from './load-results.js';
import type { ServerKind } from './load-target.js';
import { SSE_CHAT_PATH } from './peer-protocols.js';
import type { BenchOptions } from './options.js';
import type { ServerConfig, ServerReady } from './server-process.js';

export interface RunningServer {
  kind: ServerKind;
  process: BenchProcess<ServerReady>;
  /** Where clients connect: a WebSocket URL, Socket.IO's server (http:), or the SSE peer's chat route. */
  url: string;
}

/** Where `--profile` writes CPU profiles and heap snapshots (relative to the repository root, where npm runs). */
export const PROFILE_DIRECTORY = 'bench/profiles';

/** Answers of one token: long enough that no stream ends while it is measured. */
const STREAM_TOKENS = 100_000;

/** What every measure is given: the options, the load generator, and a way to start a server. */
export class BenchContext {
  constructor(
    readonly options: BenchOptions,
    readonly load: BenchProcess,
  ) {}

  /** A fresh server process: nothing of an earlier measure (streams left running, heap) carries over. */
  async startServer(kind: ServerKind, model?: ServerConfig['model']): Promise<RunningServer> {
    const config: ServerConfig = {
      kind,
      store: this.options.store,
      model: model ?? { kind: 'paced', intervalMs: this.options.intervalMs, tokens: STREAM_TOKENS },
      chunkIntervalMs: this.options.chunkIntervalMs,
    };
    // Named by kind, so that a CPP server's profile can be read beside the raw server's under the same load.
    const profile = this.options.profile
      ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIRECTORY, '--cpu-prof-name', `${kind}-${Date.now()}.cpuprofile`]
      : [];
    const process = await BenchProcess.start<ServerReady>('./server-process.js', [JSON.stringify(config)], profile);
    return { kind, process, url: urlOf(kind, process.info.port) };
  }

  /** `count` paced streams from the load generator to `server`, their models' clocks spread over a chunk interval. */
  startStreams(server: RunningServer, count: number): Promise<StreamsStarted> {
    const { intervalMs, chunkIntervalMs } = this.options;
    const request: StreamsRequest = {
      url: server.url,
      kind: server.kind,
      count,
      spreadMs: Math.max(intervalMs, chunkIntervalMs),
    };
    return this.load.request<StreamsStarted>('streams', request);
  }

  /** Ends a measure's run: the load's connections first, so that the server does not work for clients gone. */
  async finish(server: RunningServer): Promise<void> {
    await this.load.request('closeAll');
    await server.process.stop();
  }

  log(message: string): void {
    console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
  }
}

function urlOf(kind: ServerKind, port: number): string {
  switch (kind) {
    case 'cpp':
      return `ws://127.0.0.1:${port}${CPP_SESSION_PATH}`;
    case 'raw':
      return `ws://127.0.0.1:${port}/`;
    case 'socketio':
      return `http://127.0.0.1:${port}`;
    case 'sse':
      return `http://127.0.0.1:${port}${SSE_CHAT_PATH}`;
  }
}
