import { CPPError, ErrorCode, type TreeChange } from '@promethea/cpp-protocol';
import type { ThreadLink } from '../cluster/thread-link.js';
import type { Generation } from './generation.js';
import type { StreamPersister } from './stream-persister.js';

/**
 * The generation of a thread that runs on this node, if any, and the thread's generation lock in the cluster, which
 * makes it the thread's only one: claimed before a commit starts a generation, let go of once none runs here.
 */
export class GenerationSlot {
  private current: Generation | undefined;

  constructor(
    private readonly threadId: string,
    private readonly link: ThreadLink,
    private readonly persister: StreamPersister,
    /** This node let go of the lock: the thread may be idle now. */
    private readonly onReleased: () => void,
  ) {}

  get generation(): Generation | undefined {
    return this.current;
  }

  /** The generation's text flows from now on; it is the thread's generation. */
  stream(generation: Generation): void {
    this.current = generation;
    generation.release();
  }

  /** Takes the thread's generation lock; false when another node holds it. */
  tryClaim(): Promise<boolean> {
    return this.link.claimGeneration();
  }

  /** Takes the thread's generation lock before committing a generation's start; another node holding it is busy. */
  async claim(): Promise<void> {
    if (!(await this.tryClaim())) {
      throw new CPPError(ErrorCode.THREAD_BUSY, `a generation is running in thread ${this.threadId} on another server; pivot it or stop it first`);
    }
  }

  /** Runs `work`; when it fails, this node first lets go of what `claim` took (see `settle`). */
  async releasingOnFailure<Result>(work: () => Result | Promise<Result>): Promise<Result> {
    try {
      return await work();
    } catch (error) {
      this.settle(undefined);
      throw error;
    }
  }

  /**
   * Without a generation here, and unless `committed` starts one, this node lets go of the thread's generation lock,
   * and of the thread itself when nobody here listens to it (e.g. it ran a command another node forwarded).
   */
  settle(committed: TreeChange | undefined): void {
    const starts = committed?.nodes.some((node) => node.status === 'streaming') ?? false;
    if (this.current || starts) return;
    this.link.releaseGeneration();
    this.onReleased();
  }

  /** The generation's node is no longer this server's to stream or to save. */
  drop(): void {
    if (this.current) this.persister.forget(this.current.nodeId);
    this.current = undefined;
  }

  /** Another node took the lock over: this node's generation stops writing, and nothing of it is committed here. */
  lose(): void {
    const generation = this.current;
    if (!generation) return;
    generation.halt();
    this.drop();
    this.link.releaseGeneration();
    this.onReleased();
  }
}
