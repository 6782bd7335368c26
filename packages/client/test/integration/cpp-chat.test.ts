import type { ThreadGraph } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { ChatProcess } from '../support/chat-process.js';
import { ENDLESS_ANSWERS, useRealServer } from '../support/real-server.js';

const INTERRUPTED = /\[interrupted after (\d+) characters\]/;

describe('cpp-chat against the real CPPServer with the demo model', () => {
  const real = useRealServer();
  const chats: ChatProcess[] = [];
  afterEach(() => {
    for (const chat of chats.splice(0)) chat.kill();
  });

  it('pivots when a line is typed mid-stream, and the server kept exactly what the terminal showed', async () => {
    const server = await real.start(ENDLESS_ANSWERS);
    const chat = new ChatProcess([server.url, '--thread', 'thread_terminal']);
    chats.push(chat);
    await chat.stdout.until(/\(0 messages\)[^\n]*\n/);
    const answerStart = chat.stdout.text.length;

    chat.type('Explain Clojure.');
    await chat.stdout.until(/\S+ \S+ \S+ \S+/, answerStart);
    chat.type('Rust instead.');
    const shown = Number(INTERRUPTED.exec(await chat.stdout.until(INTERRUPTED, answerStart))![1]);
    await chat.stdout.until(/characters\]\n\S+ \S+/, answerStart);
    chat.type('/stop');
    await chat.stdout.until(/characters\][\s\S]*\[interrupted after/, answerStart);
    const treeStart = chat.stdout.text.length;
    chat.type('/tree');
    const tree = await chat.stdout.until('<- head', treeStart);
    chat.type('/quit');
    expect(await chat.exited).toBe(0);

    const graph = await real.connect(server).openThread('thread_terminal');
    const firstAnswer = answerTo(graph, 'Explain Clojure.');
    const branchAnswer = answerTo(graph, 'Rust instead.');
    expect(firstAnswer.status).toBe('interrupted');
    expect(firstAnswer.content).toHaveLength(shown);
    expect(chat.stdout.text.slice(answerStart)).toContain(
      `${firstAnswer.content}\n[interrupted after ${shown} characters]`,
    );
    expect(tree).toContain(`${branchAnswer.id} assistant interrupted`);
    expect(tree).toMatch(new RegExp(`${branchAnswer.id} .*<- head`));
  });
});

function answerTo(graph: ThreadGraph, prompt: string) {
  const user = Object.values(graph.nodes).find((node) => node.role === 'user' && node.content === prompt);
  const answer = user && graph.nodes[user.childrenIds[0]!];
  if (!answer) throw new Error(`no answer to ${prompt}`);
  return answer;
}
