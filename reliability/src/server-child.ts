import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';

export type ServerRequest = { id: number; command: 'memory' | 'status' | 'close' };
export interface ServerMemory {
  heapUsed: number;
  rss: number;
}
export interface ServerStatus extends ServerMemory {
  connections: number;
  /** Failures the server reported on its 'error' event. */
  errors: number;
}
export type ServerReply = { id: number; result?: ServerMemory | ServerStatus | undefined; error?: string };

/** The soak's CPP server in its own process (soak-server.ts), asked for its memory and status over IPC. */
export class ServerChild {
  private nextId = 0;
  private readonly pending = new Map<number, (reply: ServerReply) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly url: string,
  ) {
    child.on('message', (reply: ServerReply) => this.pending.get(reply.id)?.(reply));
  }

  static async start(databasePath: string, demoDelayMs: number, demoWords: number): Promise<ServerChild> {
    const child = fork(
      new URL('./soak-server.js', import.meta.url),
      [databasePath, String(demoDelayMs), String(demoWords)],
      {
        execArgv: ['--expose-gc'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      },
    );
    const [ready] = (await Promise.race([
      once(child, 'message'),
      once(child, 'exit').then(() => Promise.reject(new Error('the soak server exited at start'))),
    ])) as [{ url: string }];
    return new ServerChild(child, ready.url);
  }

  memory(): Promise<ServerMemory> {
    return this.request('memory') as Promise<ServerMemory>;
  }

  status(): Promise<ServerStatus> {
    return this.request('status') as Promise<ServerStatus>;
  }

  /** Shuts the server down gracefully (server.close(), store closed) and waits for its process to end. */
  async close(): Promise<void> {
    const exited = once(this.child, 'exit');
    await this.request('close');
    await exited;
  }

  private request(command: ServerRequest['command']): Promise<ServerReply['result']> {
    const id = (this.nextId += 1);
    return new Promise((resolve, reject) => {
      this.pending.set(id, (reply) => {
        this.pending.delete(id);
        if (reply.error !== undefined) reject(new Error(reply.error));
        else resolve(reply.result);
      });
      this.child.send({ id, command } satisfies ServerRequest);
    });
  }
}
