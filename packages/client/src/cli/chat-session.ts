import type { CPPClient } from '../cpp-client.js';
import type { GenerationResult } from '../generation.js';
import { formatTree } from './format-tree.js';

export interface ChatOutput {
  write(text: string): void;
  error(text: string): void;
}

const HELP = `Type a message to prompt; typing while an answer streams pivots it (the answer keeps what you saw).
  /tree          the thread's tree: ids, roles, statuses, the head marked
  /anchor ID     move the head to node ID; the next message branches from it
  /stop          stop the answer that is streaming
  /threads       list your threads
  /open ID       open another thread
  /rename TITLE  give this thread your own title
  /delete        delete this thread with all its messages
  /search WORDS  search your threads' titles and messages
  /export md|json  print this thread as Markdown (its branch) or CPP JSON (its tree)
  /help          this text
  /quit          leave`;

/** What cpp-chat does with each line typed. */
export class ChatSession {
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly client: CPPClient,
    private readonly output: ChatOutput,
  ) {}

  async open(threadId?: string): Promise<void> {
    const graph = await this.client.openThread(threadId);
    const count = Object.keys(graph.nodes).length;
    this.output.write(`thread ${graph.threadId} (${count} message${count === 1 ? '' : 's'}); /help lists the commands\n`);
  }

  /** Handles one line; returns false when the user asked to quit. */
  async handle(line: string): Promise<boolean> {
    const text = line.trim();
    if (text === '') return true;
    if (!text.startsWith('/')) {
      this.send(text);
      return true;
    }
    const [command = ''] = text.split(/\s+/, 1);
    const argument = text.slice(command.length).trim();
    if (command === '/quit') return false;
    await this.run(command, argument).catch((error: unknown) => this.report(error));
    return true;
  }

  /** Waits for the answers still streaming. */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
  }

  /** A pivot: it interrupts the answer streaming, if any, whose ending then reports the cut. */
  private send(userPrompt: string): void {
    const answer = this.client
      .pivot({ userPrompt, onStream: (delta) => this.output.write(delta) })
      .then((result) => this.output.write(ending(result)), (error: unknown) => this.report(error))
      .finally(() => this.running.delete(answer));
    this.running.add(answer);
  }

  private async run(command: string, argument: string): Promise<void> {
    switch (command) {
      case '/help':
        return this.output.write(`${HELP}\n`);
      case '/tree':
        return this.output.write(`${formatTree(this.currentGraph())}\n`);
      case '/anchor':
        await this.client.anchor(required(argument, 'ID'));
        return this.output.write(`head is now ${argument}\n`);
      case '/stop':
        return this.client.stop();
      case '/threads':
        return this.listThreads();
      case '/open':
        return this.open(required(argument, 'ID'));
      case '/rename':
        await this.client.renameThread(required(argument, 'TITLE'));
        return this.output.write(`thread renamed ${JSON.stringify(argument)}\n`);
      case '/delete':
        return this.deleteThread();
      case '/search':
        return this.search(required(argument, 'WORDS'));
      case '/export':
        return this.output.write(await this.client.exportThread(exportFormat(argument)));
      default:
        return this.output.error(`unknown command ${command}; /help lists the commands\n`);
    }
  }

  private async listThreads(): Promise<void> {
    const threads = await this.client.listThreads();
    if (threads.length === 0) return this.output.write('(no threads)\n');
    for (const thread of threads) {
      const marker = thread.threadId === this.client.activeThreadId ? '*' : ' ';
      this.output.write(`${marker} ${thread.threadId} ${JSON.stringify(thread.title)} (${thread.nodeCount} messages)\n`);
    }
  }

  private async deleteThread(): Promise<void> {
    const threadId = this.currentGraph().threadId;
    await this.client.deleteThread(threadId);
    this.output.write(`thread ${threadId} deleted; /open ID or /threads to go on\n`);
  }

  private async search(query: string): Promise<void> {
    const hits = await this.client.searchThreads(query);
    if (hits.length === 0) return this.output.write('(nothing found)\n');
    for (const hit of hits) this.output.write(`${hit.threadId} ${hit.nodeId ?? '(title)'} ${JSON.stringify(hit.nodeId === null ? hit.title : hit.snippet)}\n`);
  }

  private currentGraph() {
    const graph = this.client.graph();
    if (!graph) throw new Error('no thread is open');
    return graph;
  }

  report(error: unknown): void {
    const code = typeof error === 'object' && error !== null && 'code' in error ? `${String(error.code)}: ` : '';
    this.output.error(`error: ${code}${error instanceof Error ? error.message : String(error)}\n`);
  }
}

function ending(result: GenerationResult): string {
  if (result.status === 'completed') return '\n';
  return `\n[${result.status} after ${result.content.length} characters]\n`;
}

function exportFormat(argument: string): 'markdown' | 'cpp-thread' {
  if (argument === 'md' || argument === 'markdown') return 'markdown';
  if (argument === 'json') return 'cpp-thread';
  throw new Error('say /export md or /export json');
}

function required(argument: string, name: string): string {
  if (argument === '') throw new Error(`missing ${name}`);
  return argument;
}
