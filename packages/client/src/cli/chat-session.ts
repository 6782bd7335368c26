import { readFile, writeFile } from 'node:fs/promises';
import {
  type Attachment,
  isThreadId,
  MODELS_PER_PROMPT_MAX,
  THREAD_LIST_MAX_LIMIT,
  type ThreadSummary,
  type ToolCall,
  type ToolCallFrame,
} from '@promethea/cpp-protocol';
import type { CPPClient } from '../cpp-client.js';
import type { GenerationResult, GenerationStatus } from '../generation.js';
import { readImportFile } from '../import-file.js';
import type { ChatOutput } from './chat-output.js';
import { formatTree } from './format-tree.js';
import { resolveMessage, resolveThread } from './references.js';

const HELP = `Type a message to prompt; typing while an answer streams pivots it (the answer keeps what you saw).
A message is named by its number in /tree or by the start of its id; a thread by its number in /threads or the
start of its id.
  /tree                 the thread's tree: numbers, ids, roles, statuses, the head marked
  /anchor MSG           move the head to message MSG; the next message branches from it
  /stop                 stop the answer that is streaming
  /models [A,B,…]       the models the next prompts go to (up to ${MODELS_PER_PROMPT_MAX}, side by side); alone, list the models;
                        /models default: the server's default model again
  /regenerate [MSG]     a new answer to prompt MSG (or beside answer MSG; default: the head), the old one kept
  /continue [MSG]       go on with the stopped or failed answer MSG (default: the head), in the same message
  /edit MSG TEXT        prompt MSG rewritten as TEXT, beside it, and answered; the old branch is kept
  /delete MSG           delete message MSG and everything under it
  /rename TITLE         give the thread your own title
  /threads              list your threads
  /open THREAD          open another thread (a new one if no thread's id starts so)
  /search WORDS         your threads whose title or messages hold every word, best first
  /export FILE          write the thread to FILE: Markdown of its branch if FILE ends in .md, else CPP JSON
  /import FILE          add the threads of FILE, a CPP JSON export or a ChatGPT conversations.json
  /attach [FILE]        upload FILE (an image, a PDF, a text file) for your next message; alone, list those waiting;
                        an empty line then sends the files with no words
  /approve              let the tool call that waits for approval run
  /deny [REASON]        refuse it; the model is told, with your reason
  /delete-thread THREAD delete thread THREAD (its number in /threads, or the start of its id) and all it holds
  /share [DID] [ROLE]   share the thread with DID as a reader (or ROLE writer); without DID, a single-use invite
  /share link [tree]    a read-only link anyone can open, of this branch (or the whole tree), as it is now
  /share links          the thread's read-only links;  /share revoke LINK_ID takes one back
  /members              who shares the thread, and each one's role
  /unshare DID          take the thread back from DID
  /join TOKEN           join the thread of an invite and open it
  /help                 this text
  /quit                 leave`;

/** What cpp-chat does with each line typed. */
export class ChatSession {
  private readonly running = new Set<Promise<void>>();
  /** Settles once the last answer asked for has ended on screen. */
  private shown: Promise<void> = Promise.resolve();
  /** Files uploaded with /attach, which the next message carries. */
  private attachments: Attachment[] = [];
  /** The last tool call that waits for approval, for /approve and /deny. */
  private awaitingApproval: ToolCallFrame['payload'] | undefined;
  /** The models chosen with /models, which answer the next prompts side by side; none: the server's default. */
  private models: string[] = [];

  constructor(
    private readonly client: CPPClient,
    private readonly output: ChatOutput,
  ) {
    client.on('toolCall', (event) => this.toolCall(event));
  }

  /**
   * A tool call of an answer, one line per step of its life (PROTOCOL.md §26): once its input is whole, as it
   * reports progress, and how it ended; a call that waits for approval asks for /approve or /deny.
   */
  private toolCall(event: ToolCallFrame['payload']): void {
    const { toolCall } = event;
    if (toolCall.state === 'input-streaming') return;
    if (toolCall.state === 'approval-requested') {
      this.awaitingApproval = event;
      const input = oneLine(toolCall.input);
      return this.output.note(`[tool ${toolCall.toolName} ${input} waits for your approval: /approve or /deny REASON]`);
    }
    if (this.awaitingApproval?.toolCall.toolCallId === toolCall.toolCallId) this.awaitingApproval = undefined;
    this.output.note(`[tool ${toolCall.toolName}: ${toolLine(toolCall)}]`);
  }

  /** Answers the last call that waits for approval. */
  private async approve(approved: boolean, reason: string): Promise<void> {
    const waiting = this.awaitingApproval;
    if (!waiting) return this.output.error('no tool call waits for approval');
    this.awaitingApproval = undefined;
    const { threadId, nodeId, toolCall } = waiting;
    const answer = { threadId, nodeId, toolCallId: toolCall.toolCallId, approved };
    await this.client.respondToToolCall(reason === '' ? answer : { ...answer, reason });
  }

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
    // An empty line sends the files waiting alone, as a pasted screenshot goes with no words (PROTOCOL.md §6.5).
    if (text === '') {
      if (this.attachments.length > 0) this.send('');
      return true;
    }
    if (!text.startsWith('/')) {
      this.send(text);
      return true;
    }
    const [command = ''] = text.split(/\s/, 1);
    const argument = text.slice(command.length).trim();
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
    const code =
      typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string'
        ? `${error.code}: `
        : '';
    this.output.error(`error: ${code}${error instanceof Error ? error.message : String(error)}`);
  }

  /** A pivot: it interrupts the answer streaming, if any, whose ending then reports the cut. */
  private send(userPrompt: string): void {
    const attachments = this.attachments.splice(0);
    this.answer(
      (onStream) =>
        this.client.pivot({
          userPrompt,
          onStream,
          ...this.modelFields(),
          ...(attachments.length > 0 ? { attachments } : {}),
        }),
      this.firstLabel(),
    );
  }

  /** What a prompt, an edit or a regenerate names of the models chosen with /models. */
  private modelFields(): { model?: string; models?: string[] } {
    if (this.models.length === 0) return {};
    return this.models.length === 1 ? { model: this.models[0]! } : { models: [...this.models] };
  }

  /** The model named above the first answer while it streams, when several answer side by side. */
  private firstLabel(): string | undefined {
    return this.models.length > 1 ? this.models[0] : undefined;
  }

  /**
   * `/models A,B,…` chooses the models of the next prompts (checked against the server's list, so that a typo shows
   * now); `/models default` goes back to the server's default; `/models` lists them, the chosen ones marked.
   */
  private async chooseModels(argument: string): Promise<void> {
    const { models, defaultModel } = await this.client.listModels();
    if (argument === 'default') {
      this.models = [];
      return this.output.print(`the next prompts go to the default model, ${defaultModel}`);
    }
    if (argument === '') {
      const chosen = this.models.length > 0 ? this.models : [defaultModel];
      const width = Math.max(...models.map(({ id }) => id.length));
      const lines = models.map(({ id, label }) => {
        const marker = chosen.includes(id) ? '*' : ' ';
        return `${marker} ${id.padEnd(width)}  ${label}${id === defaultModel ? ' (default)' : ''}`;
      });
      return this.output.print(
        [...lines, `(* answers the next prompts; /models A,B asks several side by side)`].join('\n'),
      );
    }
    const named = [...new Set(argument.split(/[\s,]+/).filter((id) => id !== ''))];
    const unknown = named.filter((id) => !models.some((model) => model.id === id));
    if (unknown.length > 0) throw new Error(`no model ${unknown.join(', ')} here: /models lists them`);
    if (named.length > MODELS_PER_PROMPT_MAX)
      throw new Error(`at most ${MODELS_PER_PROMPT_MAX} models answer one prompt, not ${named.length}`);
    this.models = named;
    this.output.print(
      named.length === 1
        ? `the next prompts go to ${named[0]}`
        : `the next prompts go to ${named.join(', ')}, side by side`,
    );
  }

  /** Uploads a file at once, so that a refusal shows now; the next message carries it. */
  private async attach(path: string): Promise<void> {
    if (path === '') {
      const waiting = this.attachments.map(describeAttachment).join(', ');
      return this.output.print(waiting === '' ? '(no file waiting: /attach FILE adds one)' : `waiting: ${waiting}`);
    }
    const attachment = await (await this.client.attachments()).upload(path);
    this.attachments.push(attachment);
    this.output.print(`attached ${describeAttachment(attachment)}; your next message carries it`);
  }

  /**
   * Shows an answer as it streams. It is shown once the one before it has ended on screen, so that the earlier
   * one's cut is reported above the new text, not inside it.
   */
  private answer(start: (onStream: (delta: string) => void) => Promise<GenerationResult>, label?: string): void {
    const before = this.shown;
    let held: string[] | undefined = [];
    const show = () => {
      if (held === undefined) return;
      if (label !== undefined) this.output.note(`[${label}]`);
      for (const delta of held) this.output.stream(delta);
      held = undefined;
    };
    void before.then(show);
    const answer = start((delta) => (held ? held.push(delta) : this.output.stream(delta)))
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

  /**
   * The answer's last line is finished, and a blank line or a note on how it ended marks the end of the turn. The
   * answers of the other models side by side follow, whole, each under its model's name.
   */
  private ended(result: GenerationResult): void {
    this.endOfAnswer(result.status, result.content);
    for (const { model, assistantNodeId, content, status } of result.answers?.slice(1) ?? []) {
      this.output.note(`[${model ?? assistantNodeId}]`);
      if (content !== '') this.output.stream(content);
      this.endOfAnswer(status, content);
    }
  }

  private endOfAnswer(status: GenerationStatus, content: string): void {
    if (status === 'completed') this.output.print('');
    else this.output.note(`[${status} after ${content.length} characters]`);
  }

  private async run(command: string, argument: string): Promise<void> {
    switch (command) {
      case '/help':
        return this.output.print(HELP);
      case '/tree':
        return this.output.print(formatTree(this.currentGraph()));
      case '/anchor': {
        const nodeId = resolveMessage(
          this.currentGraph(),
          required(argument, 'which message (its number in /tree, or the start of its id)'),
        );
        await this.client.anchor(nodeId);
        return this.output.print(`head is now ${nodeId}; the next message branches from it`);
      }
      case '/stop':
        return this.client.stop();
      case '/approve':
        return this.approve(true, argument);
      case '/deny':
        return this.approve(false, argument);
      case '/models':
        return this.chooseModels(argument);
      case '/regenerate': {
        const nodeId = argument === '' ? undefined : resolveMessage(this.currentGraph(), argument);
        return this.answer(
          (onStream) => this.client.regenerate({ onStream, nodeId, ...this.modelFields() }),
          this.firstLabel(),
        );
      }
      case '/continue': {
        const nodeId = argument === '' ? undefined : resolveMessage(this.currentGraph(), argument);
        return this.answer((onStream) => this.client.continue({ onStream, nodeId }));
      }
      case '/edit': {
        const [reference = ''] = argument.split(/\s/, 1);
        const nodeId = resolveMessage(
          this.currentGraph(),
          required(reference, 'which prompt (its number in /tree, or the start of its id), then its new text'),
        );
        const userPrompt = required(
          argument.slice(reference.length).trim(),
          `the new text of the prompt, after ${reference}`,
        );
        return this.answer(
          (onStream) => this.client.edit({ nodeId, userPrompt, onStream, ...this.modelFields() }),
          this.firstLabel(),
        );
      }
      case '/delete': {
        const nodeId = resolveMessage(
          this.currentGraph(),
          required(argument, 'which message (its number in /tree, or the start of its id)'),
        );
        const graph = await this.client.deleteBranch(nodeId);
        return this.output.print(
          `deleted ${nodeId} and what was under it; head is ${graph.activeHeadMessageId ?? '(none: the thread is empty)'}`,
        );
      }
      case '/rename': {
        const title = required(argument, 'the title');
        await this.client.renameThread(title);
        return this.output.print(`thread renamed ${JSON.stringify(title)}`);
      }
      case '/threads':
        return this.listThreads();
      case '/open': {
        const reference = required(argument, 'which thread (its number in /threads, or the start of its id)');
        return this.open(resolveThread(await this.recentThreads(), reference) ?? reference);
      }
      case '/search':
        return this.search(required(argument, 'the words to look for'));
      case '/export':
        return this.export(required(argument, 'the file to write (.md for Markdown, else CPP JSON)'));
      case '/import':
        return this.import(required(argument, 'the file to read (a CPP JSON export or a ChatGPT conversations.json)'));
      case '/attach':
        return this.attach(argument);
      case '/delete-thread': {
        const reference = required(argument, 'which thread (its number in /threads, or the start of its id)');
        // An older thread than /threads lists is named by its whole id.
        const threadId =
          resolveThread(await this.recentThreads(), reference) ?? (isThreadId(reference) ? reference : undefined);
        if (threadId === undefined) throw new Error(`no thread id starts with ${reference}: /threads lists them`);
        await this.client.deleteThread(threadId);
        const open =
          this.client.activeThreadId === undefined ? '; no thread is open: type to start a new one, or /open one' : '';
        return this.output.print(`deleted thread ${threadId}${open}`);
      }
      case '/share':
        return this.share(argument);
      case '/members':
        return this.printMembers(await this.client.listMembers());
      case '/unshare':
        return this.printMembers(await this.client.removeMember(required(argument, 'the DID to take the thread from')));
      case '/join': {
        const { threadId } = await this.client.acceptInvite(required(argument, 'the invite token'));
        return this.open(threadId);
      }
      default:
        return this.output.error(`unknown command ${command}; /help lists the commands`);
    }
  }

  /** `/share DID [ROLE]` adds a member; `/share [ROLE]` makes a single-use invite and shows its token once. */
  private async share(argument: string): Promise<void> {
    const words = argument.split(/\s+/).filter((word) => word !== '');
    if (words[0] === 'link' || words[0] === 'links' || words[0] === 'revoke') return this.shareLink(words);
    const did = words[0]?.startsWith('did:') ? words.shift() : undefined;
    const role = words[0] ?? 'reader';
    if (role !== 'reader' && role !== 'writer') throw new Error(`a role is reader or writer, not ${role}`);
    if (did !== undefined) return this.printMembers(await this.client.addMember(did, role));
    const { token, invite } = await this.client.createInvite(role);
    const expires = new Date(invite.expiresAt).toISOString();
    this.output.print(`invite (${role}, once, until ${expires}): /join ${token}\ngive it to one person only`);
  }

  /** `/share link [branch|tree]`, `/share links`, `/share revoke LINK_ID`: read-only share links (PROTOCOL.md §29.10). */
  private async shareLink([command, argument = '']: string[]): Promise<void> {
    if (command === 'link') {
      const scope = argument || 'branch';
      if (scope !== 'branch' && scope !== 'tree')
        throw new Error(`a share link shows a branch or the tree, not ${scope}`);
      const { url, link } = await this.client.createShareLink(scope);
      return this.output.print(`read-only link (${scope}, ${link.linkId}): ${url}\nanyone with it can read it`);
    }
    const links =
      command === 'revoke'
        ? await this.client.revokeShareLink(required(argument, 'the id of the link to revoke'))
        : await this.client.listShareLinks();
    if (links.length === 0) return this.output.print('(no read-only links)');
    const when = (createdAt: number) => new Date(createdAt).toISOString();
    this.output.print(
      links.map(({ linkId, scope, createdAt }) => `${linkId}  ${scope.padEnd(6)} ${when(createdAt)}`).join('\n'),
    );
  }

  private printMembers({ ownerDid, members }: { ownerDid: string; members: { did: string; role: string }[] }): void {
    this.output.print(
      [`owner   ${ownerDid}`, ...members.map(({ did, role }) => `${role.padEnd(7)} ${did}`)].join('\n'),
    );
  }

  private async search(query: string): Promise<void> {
    const hits = await this.client.searchThreads(query);
    if (hits.length === 0) return this.output.print(`(no thread holds ${JSON.stringify(query)})`);
    const width = String(hits.length).length;
    const lines = hits.map((hit, index) => {
      const where = hit.nodeId === null ? 'title' : `message ${hit.nodeId}`;
      return `${String(index + 1).padStart(width)}  ${hit.threadId} ${JSON.stringify(hit.title)}, ${where}: ${hit.snippet.replace(/\s+/g, ' ')}`;
    });
    this.output.print(lines.join('\n'));
  }

  private async export(file: string): Promise<void> {
    const format = file.endsWith('.md') ? 'markdown' : 'cpp-thread';
    await writeFile(file, await this.client.exportThread(format));
    this.output.print(
      `wrote ${format === 'markdown' ? 'the branch as Markdown' : 'the thread as CPP JSON'} to ${file}`,
    );
  }

  private async import(file: string): Promise<void> {
    const { format, document } = readImportFile(await readFile(file, 'utf8'));
    const imported = await this.client.importThreads(format, document);
    const kind = format === 'chatgpt' ? 'ChatGPT conversations' : 'CPP JSON';
    this.output.print(
      `imported ${imported.length} thread${imported.length === 1 ? '' : 's'} (${kind}); /open THREAD opens one`,
    );
    const ids = new Set(imported.map((thread) => thread.threadId));
    this.printThreads(await this.recentThreads(), (thread) => ids.has(thread.threadId));
  }

  private async listThreads(): Promise<void> {
    const { threads, nextCursor } = await this.client.listThreadPage({ limit: THREAD_LIST_MAX_LIMIT });
    if (threads.length === 0) return this.output.print('(no threads)');
    this.printThreads(threads);
    if (nextCursor !== null)
      this.output.print(`(the ${threads.length} most recent; /search finds any thread, /open takes a whole id)`);
  }

  /** The most recent threads, those /threads numbers: a page of the list, not the whole history. */
  private recentThreads(): Promise<ThreadSummary[]> {
    return this.client.listThreads({ limit: THREAD_LIST_MAX_LIMIT });
  }

  /** The threads `shown`, numbered by their place among all `threads`, as /open takes them. */
  private printThreads(threads: ThreadSummary[], shown: (thread: ThreadSummary) => boolean = () => true): void {
    const width = String(threads.length).length;
    const lines = threads.flatMap((thread, index) => {
      if (!shown(thread)) return [];
      const marker = thread.threadId === this.client.activeThreadId ? '*' : ' ';
      return [
        `${String(index + 1).padStart(width)} ${marker} ${thread.threadId} ${JSON.stringify(thread.title)} (${thread.nodeCount} messages)`,
      ];
    });
    this.output.print(lines.join('\n'));
  }

  private currentGraph() {
    const graph = this.client.graph();
    if (!graph) throw new Error('no thread is open');
    return graph;
  }
}

/** E.g. `chart.png (image/png, 640×480, 12345 bytes)`. */
function describeAttachment({ name, mediaType, size, width, height }: Attachment): string {
  const pixels = width && height ? `, ${width}×${height}` : '';
  return `${name} (${mediaType}${pixels}, ${size} bytes)`;
}

function required(argument: string, what: string): string {
  if (argument === '') throw new Error(`say ${what}`);
  return argument;
}

/** A call's state on one line: its input once whole, its progress, its output or why it has none. */
function toolLine(call: ToolCall): string {
  switch (call.state) {
    case 'input-available': {
      const { progress } = call;
      if (!progress) return `runs ${oneLine(call.input)}`;
      const total = progress.total === undefined ? '' : `/${progress.total}`;
      return `${progress.progress}${total}${progress.message ? ` ${oneLine(progress.message)}` : ''}`;
    }
    case 'output-available':
      return `done: ${oneLine(call.output ?? '')}`;
    case 'output-denied':
      return 'denied';
    case 'output-error':
      return `failed: ${oneLine(call.errorText ?? '')}`;
    default:
      return call.state;
  }
}

/** Text shown on one line of a terminal, shortened: tool input and output are a model's and a tool's, not ours. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat;
}
