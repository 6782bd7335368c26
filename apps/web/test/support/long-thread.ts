import { exportThread, type MessageNode, type ThreadGraph } from '@promethea/cpp-protocol';
import type { ChatPage } from './chat-page.js';

/** An answer of several paragraphs, a list and code: a long chat's messages are taller than a screen together. */
function answerText(turn: number): string {
  return [
    `## Turn ${turn}`,
    `Answer ${turn} goes over topic ${turn % 5} in some detail, so that the message takes several lines.`,
    '- a first point\n- a second point\n- a third point',
    '```ts\nconst value = 42;\n```',
  ].join('\n\n');
}

/**
 * A CPP JSON export of one linear thread of `messages` messages (prompts and answers in turn), titled `title`:
 * imported through the UI's file picker, it makes a long chat in a second where typing it would take minutes.
 */
export function longThreadExport(messages: number, title = 'A long thread'): string {
  const nodes: Record<string, MessageNode> = {};
  let parentId: string | null = null;
  for (let index = 0; index < messages; index += 1) {
    const id = `msg_long${index}`;
    const role = index % 2 === 0 ? 'user' : 'assistant';
    const turn = Math.floor(index / 2) + 1;
    nodes[id] = {
      id,
      parentId,
      childrenIds: [],
      role,
      content: role === 'user' ? `Question number ${turn}, about topic ${turn % 5}` : answerText(turn),
      status: 'completed',
      createdAt: 1_781_100_000_000 + index,
    };
    if (parentId !== null) nodes[parentId]!.childrenIds.push(id);
    parentId = id;
  }
  const graph: ThreadGraph = {
    threadId: 'thread_long',
    rootNodeId: 'msg_long0',
    activeHeadMessageId: parentId,
    version: messages,
    nodes,
  };
  return JSON.stringify(exportThread(graph, title, 1_781_100_100_000));
}

/** Imports a long thread through the thread list's file picker and waits until its last message is on screen. */
export async function openLongThread(chat: ChatPage, messages = 48, title = 'A long thread'): Promise<void> {
  const threads = chat.page.getByRole('navigation', { name: 'Threads' });
  const picker = threads.getByLabel('File to import: a CPP JSON export or a ChatGPT conversations.json');
  await picker.setInputFiles({
    name: 'long.json',
    mimeType: 'application/json',
    buffer: Buffer.from(longThreadExport(messages, title)),
  });
  await chat.page.waitForFunction(
    (count) => document.querySelectorAll('[role="log"] article.message').length === count,
    messages,
  );
}
