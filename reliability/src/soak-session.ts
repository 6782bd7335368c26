import { setTimeout as sleep } from 'node:timers/promises';
import { CPPClient, type GenerationResult } from '@promethea/cpp-client/node';
import type WebSocket from 'ws';
import type { SoakFigures } from './soak-figures.js';
import type { SoakOptions } from './soak-options.js';
import { streamedAtLeast } from './stream-waits.js';
import { trackedSocket } from './tracked-socket.js';

export const SOAK_DID = 'did:key:zSoakSessions';

/**
 * One simulated person: a client with a thread of its own, acting at random until the deadline: prompt (now and
 * then from an anchored older node), and while an answer streams pivot, stop, anchor or let it run; now and then
 * the connection is cut under it (the client reconnects by itself).
 */
export class SoakSession {
  readonly client: CPPClient;
  readonly threadIds: string[] = [];
  private socket: WebSocket | undefined;
  private active: Promise<GenerationResult> | undefined;

  constructor(
    endpoint: string,
    private readonly figures: SoakFigures,
    private readonly options: SoakOptions,
  ) {
    this.client = new CPPClient({
      endpoint,
      did: SOAK_DID,
      reconnect: { initialDelayMs: 100, maxDelayMs: 2000 },
      WebSocket: trackedSocket((socket) => (this.socket = socket)),
    });
    this.client.on('error', (error) => figures.failed('error event', error));
    this.client.on('status', (status) => status === 'reconnecting' && (figures.reconnects += 1));
    this.client.on('chunk', () => (figures.chunks += 1));
  }

  /** The session's own thread: the one it acts on. */
  get threadId(): string {
    return this.threadIds[0]!;
  }

  /** Opens (creating it without an id) a thread; the first one opened is the session's own. */
  async open(threadId?: string): Promise<void> {
    this.threadIds.push((await this.client.openThread(threadId)).threadId);
  }

  async run(deadline: number): Promise<void> {
    while (Date.now() < deadline) {
      await this.act();
      const [least, most] = this.options.thinkMs;
      await sleep(least + Math.random() * (most - least));
    }
  }

  /** Resolves once no answer of this session runs any more. */
  async settle(): Promise<void> {
    while (this.active) await this.active.catch(() => undefined);
  }

  private async act(): Promise<void> {
    const roll = Math.random();
    if (roll < 0.05) return this.disconnect();
    if (!this.active) {
      if (roll < 0.25) await this.anchor();
      return this.prompt();
    }
    if (roll < 0.35) return this.pivot();
    if (roll < 0.5) return this.stop();
    if (roll < 0.6) return this.anchor();
  }

  private prompt(): Promise<void> {
    this.figures.actions.prompt += 1;
    return this.track(
      this.client.prompt({
        threadId: this.threadId,
        userPrompt: `Tell me something, ${Math.random().toString(36).slice(2, 8)}`,
      }),
    );
  }

  private pivot(): Promise<void> {
    this.figures.actions.pivot += 1;
    const halted = this.client.streamingNode(this.threadId)?.id;
    return this.track(this.client.pivot({ threadId: this.threadId, userPrompt: 'Something else instead' }), halted);
  }

  private async stop(): Promise<void> {
    this.figures.actions.stop += 1;
    await this.client.stop({ threadId: this.threadId }).catch((error: unknown) => this.figures.failed('stop', error));
  }

  private async anchor(): Promise<void> {
    const nodeIds = Object.keys(this.client.graph(this.threadId)?.nodes ?? {});
    const target = nodeIds[Math.floor(Math.random() * nodeIds.length)];
    if (target === undefined) return;
    this.figures.actions.anchor += 1;
    await this.client
      .anchor(target, { threadId: this.threadId })
      .catch((error: unknown) => this.figures.failed('anchor', error));
  }

  private disconnect(): void {
    this.figures.actions.disconnect += 1;
    this.socket?.terminate();
  }

  /** Keeps the answer as the running one until it ends; resolves once it streams (or ended). */
  private track(answer: Promise<GenerationResult>, replacing?: string): Promise<void> {
    this.active = answer;
    answer
      .then(
        (result) => (this.figures.answers[result.status] += 1),
        (error: unknown) => this.figures.failed('answer', error),
      )
      .finally(() => {
        if (this.active === answer) this.active = undefined;
      });
    return streamedAtLeast(this.client, this.threadId, 1, answer, replacing);
  }
}
