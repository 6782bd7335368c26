import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

/** A request from the bench to one of its child processes, and the answer. */
interface Request {
  id: number;
  command: string;
  args: unknown;
}
type Reply = { id: number; result: unknown } | { id: number; error: string };
type Ready = { ready: unknown };

const STOP_GRACE_MS = 10_000;

/**
 * A child process of the bench (a server, the load generator, the model server), driven by request/reply messages
 * over the IPC channel. Each runs in its own process so that its event loop shares nothing with the others.
 */
export class BenchProcess<ReadyInfo = unknown> {
  private nextId = 0;
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  private exited = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly info: ReadyInfo,
  ) {
    child.on('message', (message: Reply) => this.settle(message));
    child.once('exit', (code, signal) => {
      this.exited = true;
      for (const { reject } of this.pending.values())
        reject(new Error(`child process exited (${code ?? signal}) while a request was pending`));
      this.pending.clear();
    });
  }

  /** Forks `script` (a file of this folder) and waits until it says it is ready. */
  static async start<ReadyInfo>(
    script: string,
    args: string[],
    execArgv: string[] = [],
  ): Promise<BenchProcess<ReadyInfo>> {
    const child = fork(new URL(script, import.meta.url), args, {
      execArgv: ['--expose-gc', ...execArgv],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    const ready = new Promise<ReadyInfo>((resolve, reject) => {
      child.once('message', (message: Ready) => resolve(message.ready as ReadyInfo));
      child.once('exit', (code) => reject(new Error(`${script} exited with ${code} before it was ready`)));
    });
    return new BenchProcess(child, await ready);
  }

  request<Result>(command: string, args: unknown = {}): Promise<Result> {
    if (this.exited) return Promise.reject(new Error(`child process has exited; cannot ${command}`));
    const id = ++this.nextId;
    return new Promise<Result>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.child.send({ id, command, args } satisfies Request);
    });
  }

  /** Asks the child to finish (it cleans up and exits); kills it when it does not within the grace period. */
  async stop(): Promise<void> {
    if (this.exited) return;
    const exit = once(this.child, 'exit');
    this.request('stop').catch(() => undefined);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), STOP_GRACE_MS);
    await exit;
    clearTimeout(timer);
  }

  private settle(reply: Reply): void {
    const waiter = this.pending.get(reply.id);
    if (!waiter) return;
    this.pending.delete(reply.id);
    if ('error' in reply) waiter.reject(new Error(reply.error));
    else waiter.resolve(reply.result);
  }
}

export type RequestHandlers = Record<string, (args: never) => unknown>;

/**
 * The child's side: announces `ready`, answers each request with its handler's result, and exits after `stop`
 * (whose handler cleans up).
 */
export function serveRequests(ready: unknown, handlers: RequestHandlers & { stop(): unknown }): void {
  process.on('message', (request: Request) => {
    const handler = handlers[request.command] as ((args: unknown) => unknown) | undefined;
    Promise.resolve()
      .then(() => {
        if (!handler) throw new Error(`unknown command ${request.command}`);
        return handler(request.args);
      })
      .then(
        (result) => process.send?.({ id: request.id, result: result ?? null } satisfies Reply),
        (error: unknown) =>
          process.send?.({
            id: request.id,
            error: error instanceof Error ? (error.stack ?? error.message) : String(error),
          } satisfies Reply),
      )
      .then(() => {
        if (request.command === 'stop') process.disconnect();
      });
  });
  // The parent may die without saying stop: do not outlive it.
  process.once('disconnect', () => process.exit(0));
  process.send?.({ ready } satisfies Ready);
}
