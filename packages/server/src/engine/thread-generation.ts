import { CPPError, ErrorCode, type TreeChange } from '@promethea/cpp-protocol';
import type { AnswerStream } from './answer-stream.js';
import { cutAt, type Cut, type ReceivedLengths } from './cut.js';
import type { StreamPersister } from './stream-persister.js';
import type { ThreadLink } from './thread-link.js';

/**
 * Where the thread's one generation stands on this server. The lock (`ThreadLink`) is held in every state but
 * `idle`.
 * - `idle`: no lock, no stream.
 * - `held`: the lock is taken and the change that starts an answer is being committed (or recovered).
 * - `streaming`: the answer's text flows to clients.
 * - `halting`: the stream was halted at `cut` (CPP_STREAM_HALTED is out); the commit that keeps the cut is pending.
 * - `ended`: the stream ended by itself; the commit of its end is pending.
 */
export type GenerationState =
  | { name: 'idle' }
  | { name: 'held' }
  | { name: 'streaming'; stream: AnswerStream }
  | { name: 'halting'; stream: AnswerStream; cut: Cut }
  | { name: 'ended'; stream: AnswerStream };

/**
 * The generation of a thread and its lock, as one state machine. Each transition is named once:
 * `claim` (idle → held), `start` (held → streaming), `halt` (streaming → halting), `end` (streaming → ended),
 * `committed` (a commit moved the thread on: → held, or → idle once nothing streams here), `abandon` (the
 * answer will not be committed: held → idle) and `lose` (another server took the lock over: → idle, nothing committed). Leaving for
 * `idle` is the one meaning of letting the lock go.
 */
export class ThreadGeneration {
  private current: GenerationState = { name: 'idle' };

  constructor(
    private readonly threadId: string,
    private readonly link: ThreadLink,
    private readonly persister: StreamPersister,
    /** The generation is idle again: the thread may be unloaded. */
    private readonly onIdle: () => void,
  ) {}

  get state(): GenerationState {
    return this.current;
  }

  /** The stream of this server's generation, whatever its state. */
  get stream(): AnswerStream | undefined {
    return 'stream' in this.current ? this.current.stream : undefined;
  }

  /** idle → held. Held already (a halted stream's thread, about to start the next answer): nothing to take. */
  async claim(): Promise<void> {
    if (!(await this.tryClaim())) {
      throw new CPPError(
        ErrorCode.THREAD_BUSY,
        `a generation is running in thread ${this.threadId} on another server; pivot it or stop it first`,
      );
    }
  }

  /** `claim`, with false instead of THREAD_BUSY when another engine holds the lock. */
  async tryClaim(): Promise<boolean> {
    if (!(await this.link.claimGeneration())) return false;
    if (this.current.name === 'idle') this.current = { name: 'held' };
    return true;
  }

  /** held → streaming: the committed answer's text flows from now on. */
  start(stream: AnswerStream): void {
    this.current = { name: 'streaming', stream };
    stream.flow();
  }

  /**
   * streaming → halting: stops the stream and freezes its text; `cut` says where it ends. `undefined` when the stream
   * had already ended by itself (→ ended: its end is committed instead).
   */
  halt(received: ReceivedLengths): Cut | undefined {
    const state = this.current;
    if (state.name === 'halting') return state.cut;
    if (state.name !== 'streaming' && state.name !== 'ended') return undefined;
    const point = state.stream.halt();
    if (!point) {
      this.current = { name: 'ended', stream: state.stream };
      return undefined;
    }
    const cut = cutAt(point, received);
    this.current = { name: 'halting', stream: state.stream, cut };
    return cut;
  }

  /** streaming → ended: the stream ended by itself (`stream.outcome` says how). */
  end(stream: AnswerStream): void {
    if (this.current.name === 'streaming' && this.current.stream === stream) this.current = { name: 'ended', stream };
  }

  /**
   * A change was committed. The stream whose node it ended is no longer this server's to stream or to save; the
   * lock stays held while a stream remains or the change starts one, and is let go of otherwise (→ idle).
   */
  committed(change: TreeChange, stillStreaming: (nodeId: string) => boolean): void {
    const stream = this.stream;
    if (stream && !stillStreaming(stream.nodeId)) {
      this.persister.forget(stream.nodeId);
      this.current = { name: 'held' };
    }
    if (this.stream || change.nodes.some((node) => node.status === 'streaming')) return;
    this.toIdle();
  }

  /** The answer the lock was taken for will not be committed (its commit failed, or nothing was left to recover): held → idle. */
  abandon(): void {
    if (this.current.name === 'held') this.toIdle();
  }

  /** Another server took the lock over: the stream stops writing, nothing of it is committed here (→ idle). */
  lose(): void {
    const stream = this.stream;
    if (!stream) return;
    stream.halt();
    this.persister.forget(stream.nodeId);
    this.toIdle();
  }

  private toIdle(): void {
    this.current = { name: 'idle' };
    this.link.releaseGeneration();
    this.onIdle();
  }
}
