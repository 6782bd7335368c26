import type { CPPClient } from '../cpp-client.js';
import type { GenerationResult } from '../generation.js';
import type { ChatOutput } from './chat-output.js';
import { formatTree } from './format-tree.js';
import { resolveMessage, resolveThread } from './references.js';

const HELP = `Type a message to prompt; typing while an answer streams pivots it (the answer keeps what you saw).
A message is named by its number in /tree or by the start of its id; a thread by its number in /threads or the
start of its id.
  /tree          the thread's tree: numbers, ids, roles, statuses, the head marked
  /anchor MSG    move the head to message MSG; the next message branches from it
  /stop          stop the answer that is streaming
  /threads       list your threads
  /open THREAD   open another thread (a new one if no thread's id starts so)
  /help          this text
  /quit          leave`;

/** What cpp-chat does with each line typed. */
export class ChatSession {
  private readonly running = new Set<Promise<void>>();
  /** Settles once the last answer asked for has ended on screen. */
  private shown: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: CPPClient,
    private readonly output: ChatOutput,
  ) {}

  async open(threadId?: string): Promise<void> {
    const graph = await this.client.openThread(threadId);
    const count = Object.keys(graph.nodes).length;
    this.output.print(`thread ${graph.threadId} (${count} message${count === 1 ? '' : 's'}); /help lists the commands`);
  }

  /** Whether an answer this session asked for is still streaming. */
  get answering(): boolean {
    return this.running.size > 0;
  }

  /** Handles one line; returns false when the user asked to quit. */
  async handle(line: string): Promise<boolean> {
    const text = line.trim();
    if (text === '') return true;
    if (!text.startsWith('/')) {
      this.send(text);
      return true;
    }
    const [command = '', argument = ''] = text.split(/\s+/, 2);
    if (command === '/quit') return false;
    await this.run(command, argument).catch((error: unknown) => this.report(error));
    return true;
  }

  /** Waits for the answers still streaming. */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  stop(): Promise<void> {
    return this.client.stop().catch((error: unknown) => this.report(error));
  }

  report(error: unknown): void {
    const code = typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string' ? `${error.code}: ` : '';
    this.output.error(`error: ${code}${error instanceof Error ? error.message : String(error)}`);
  }

  /**
   * A pivot: it interrupts the answer streaming, if any, whose ending then reports the cut. The new answer is shown
   * once the one before it has ended on screen, so that the cut is reported above the new text, not inside it.
   */
  private send(userPrompt: string): void {
    const before = this.shown;
    let held: string[] | undefined = [];
    const show = () => {
      for (const delta of held ?? []) this.output.stream(delta);
      held = undefined;
    };
    void before.then(show);
    const answer = this.client
      .pivot({ userPrompt, onStream: (delta) => (held ? held.push(delta) : this.output.stream(delta)) })
      .then(
        async (result) => {
          await before.then(show);
          this.ended(result);
        },
        async (error: unknown) => {
          await before.then(show);
          this.report(error);
        },
      )
      .finally(() => this.running.delete(answer));
    this.running.add(answer);
    this.shown = answer;
  }

  /** The answer's last line is finished, and a blank line or a note on how it ended marks the end of the turn. */
  private ended(result: GenerationResult): void {
    if (result.status === 'completed') this.output.print('');
    else this.output.note(`[${result.status} after ${result.content.length} characters]`);
  }

  private async run(command: string, argument: string): Promise<void> {
    switch (command) {
      case '/help':
        return this.output.print(HELP);
      case '/tree':
        return this.output.print(formatTree(this.currentGraph()));
      case '/anchor': {
        const nodeId = resolveMessage(this.currentGraph(), required(argument, 'which message (its number in /tree, or the start of its id)'));
        await this.client.anchor(nodeId);
        return this.output.print(`head is now ${nodeId}; the next message branches from it`);
      }
      case '/stop':
        return this.client.stop();
      case '/threads':
        return this.listThreads();
      case '/open': {
        const reference = required(argument, 'which thread (its number in /threads, or the start of its id)');
        return this.open(resolveThread(await this.client.listThreads(), reference) ?? reference);
      }
      default:
        return this.output.error(`unknown command ${command}; /help lists the commands`);
    }
  }

  private async listThreads(): Promise<void> {
    const threads = await this.client.listThreads();
    if (threads.length === 0) return this.output.print('(no threads)');
    const width = String(threads.length).length;
    const lines = threads.map((thread, index) => {
      const marker = thread.threadId === this.client.activeThreadId ? '*' : ' ';
      return `${String(index + 1).padStart(width)} ${marker} ${thread.threadId} ${JSON.stringify(thread.title)} (${thread.nodeCount} messages)`;
    });
    this.output.print(lines.join('\n'));
  }

  private currentGraph() {
    const graph = this.client.graph();
    if (!graph) throw new Error('no thread is open');
    return graph;
  }
}

function required(argument: string, what: string): string {
  if (argument === '') throw new Error(`say ${what}`);
  return argument;
}
