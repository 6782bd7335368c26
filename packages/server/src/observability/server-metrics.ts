import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { promClient } from './prom-client.js';

/** Values read when Prometheus scrapes, rather than counted as they change. */
export interface ServerGauges {
  connections(): number;
  /** Threads held in memory: someone is subscribed, or an answer is being written. */
  threads(): number;
  /** Bytes waiting to be written to clients, over all connections. */
  bufferedBytes(): number;
}

/** A pivot's halt takes milliseconds; a second is an outage. */
const PIVOT_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const FIRST_TOKEN_SECONDS = [0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32];
const TOKENS_PER_SECOND = [1, 5, 10, 20, 40, 80, 160, 320];
const STORE_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

/** The cpp_* series of one server, registered in `registry`. */
export class ServerMetrics {
  readonly framesReceived: Counter<'type'>;
  readonly framesSent: Counter<'type'>;
  readonly errors: Counter<'code'>;
  readonly activeGenerations: Gauge;
  readonly generations: Counter<'provider' | 'model' | 'outcome'>;
  readonly pivotHalt: Histogram;
  readonly pivotSteps: Histogram<'step'>;
  readonly firstToken: Histogram<'provider' | 'model'>;
  readonly tokensPerSecond: Histogram<'provider' | 'model'>;
  readonly storeOperations: Histogram<'operation' | 'result'>;

  constructor(registry: Registry, gauges: ServerGauges) {
    const { Counter, Gauge, Histogram } = promClient();
    const registers = [registry];
    scrapedGauge(registers, 'cpp_connections_open', 'Open WebSocket connections.', () => gauges.connections());
    scrapedGauge(registers, 'cpp_threads_open', 'Threads held in memory (subscribed or answering).', () =>
      gauges.threads(),
    );
    scrapedGauge(
      registers,
      'cpp_websocket_buffered_bytes',
      'Bytes waiting to be written to slow clients, summed over connections.',
      () => gauges.bufferedBytes(),
    );
    this.activeGenerations = new Gauge({
      name: 'cpp_generations_active',
      help: 'Model calls writing an answer now.',
      registers,
    });
    this.generations = new Counter({
      name: 'cpp_generations_total',
      help: 'Model calls ended, by how they ended: completed, failed, or halted (pivot, stop, shutdown).',
      labelNames: ['provider', 'model', 'outcome'],
      registers,
    });
    this.framesReceived = new Counter({
      name: 'cpp_frames_received_total',
      help: 'Client frames decoded, by type.',
      labelNames: ['type'],
      registers,
    });
    this.framesSent = new Counter({
      name: 'cpp_frames_sent_total',
      help: 'Server frames sent, by type (one per connection it goes to).',
      labelNames: ['type'],
      registers,
    });
    this.errors = new Counter({
      name: 'cpp_errors_total',
      help: 'CPP errors, by code: CPP_ERROR frames answering a frame, and provider failures.',
      labelNames: ['code'],
      registers,
    });
    this.pivotHalt = new Histogram({
      name: 'cpp_pivot_halt_seconds',
      help: 'From CPP_PIVOT_INIT to CPP_STREAM_HALTED sent, for pivots that halted a stream.',
      buckets: PIVOT_SECONDS,
      registers,
    });
    this.pivotSteps = new Histogram({
      name: 'cpp_pivot_step_seconds',
      help: 'Duration of each step of a pivot.',
      labelNames: ['step'],
      buckets: PIVOT_SECONDS,
      registers,
    });
    this.firstToken = new Histogram({
      name: 'cpp_provider_first_token_seconds',
      help: 'From the start of a model call to its first text.',
      labelNames: ['provider', 'model'],
      buckets: FIRST_TOKEN_SECONDS,
      registers,
    });
    this.tokensPerSecond = new Histogram({
      name: 'cpp_provider_tokens_per_second',
      help: 'Output tokens per second after the first token, for completed answers (tokens as reported by the provider, else deltas).',
      labelNames: ['provider', 'model'],
      buckets: TOKENS_PER_SECOND,
      registers,
    });
    this.storeOperations = new Histogram({
      name: 'cpp_store_operation_seconds',
      help: 'Conversation store operations, by operation and result.',
      labelNames: ['operation', 'result'],
      buckets: STORE_SECONDS,
      registers,
    });
  }
}

function scrapedGauge(registers: Registry[], name: string, help: string, read: () => number): void {
  const { Gauge } = promClient();
  new Gauge({
    name,
    help,
    registers,
    collect() {
      this.set(read());
    },
  });
}
