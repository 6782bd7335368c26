import { afterEach, describe, expect, it } from 'vitest';
import { ChatProcess } from '../support/chat-process.js';
import { DID, useFakeSession } from '../support/session.js';

// The scripted server speaks the seed spec: it challenges no one, so the chats claim a DID instead of proving one.
describe('cpp-chat against a scripted server', () => {
  const session = useFakeSession();
  const chats: ChatProcess[] = [];
  const startChat = (...args: string[]) => {
    const chat = new ChatProcess(args);
    chats.push(chat);
    return chat;
  };
  afterEach(() => {
    for (const chat of chats.splice(0)) chat.kill();
  });

  it('streams the answer, pivots on a line typed while it streams, and prints the tree', async () => {
    const { server } = session;
    const chat = startChat(server.url, '--did', DID, '--thread', 'thread_cli');
    await chat.stdout.until('thread thread_cli (0 messages)');
    expect(server.handshakes[0]).toMatchObject({ did: DID, didFromHeader: true });

    chat.type('Explain spiking neural networks.');
    await server.frame('CPP_PROMPT');
    const first = server.streaming('thread_cli');
    server.chunk('thread_cli', first, 'Spiking networks');
    await chat.stdout.until('Spiking networks');

    chat.type('Rust instead.');
    const pivot = await server.frame('CPP_PIVOT_INIT');
    expect(pivot.payload).toMatchObject({
      interruptedNodeId: first,
      receivedContentLength: 16,
      userPrompt: 'Rust instead.',
    });
    await chat.stdout.until('[interrupted after 16 characters]');
    const second = server.streaming('thread_cli');
    server.chunk('thread_cli', second, 'Rust has ownership.');
    server.complete('thread_cli', second);
    await chat.stdout.until('Rust has ownership.\n');

    const before = chat.stdout.text.length;
    chat.type('/tree');
    const tree = await chat.stdout.until('<- head', before);
    expect(tree).toContain(`${first} assistant interrupted "Spiking networks"`);
    expect(tree).toContain(`${pivot.payload.newBranchNodeId} user completed "Rust instead."`);
    expect(tree).toContain(`${second} assistant completed "Rust has ownership."  <- head`);

    chat.type('/quit');
    expect(await chat.exited).toBe(0);
  });

  it('runs the commands and reports errors without leaving', async () => {
    const { server } = session;
    const chat = startChat(server.url, '--did', DID, '--thread', 'thread_commands');
    await chat.stdout.until('thread thread_commands');

    chat.type('/threads');
    await chat.stdout.until('1 * thread_commands "" (0 messages)');
    chat.type('/anchor msg_missing');
    await chat.stderr.until('error: no message id starts with msg_missing: /tree lists them');
    chat.type('/nonsense');
    await chat.stderr.until('unknown command /nonsense');
    chat.type('/stop');
    chat.type('/help');
    await chat.stdout.until('/anchor MSG');
    chat.type('/open thread_other');
    await chat.stdout.until('thread thread_other (0 messages)');
    chat.type('Hello there');
    await server.frame('CPP_PROMPT');
    expect(server.framesOf('CPP_PROMPT')[0]?.payload.activeThreadId).toBe('thread_other');

    // The input ends while the answer streams: cpp-chat waits for it, then leaves.
    chat.endInput();
    const nodeId = server.streaming('thread_other');
    server.chunk('thread_other', nodeId, 'General Kenobi.');
    server.complete('thread_other', nodeId);
    expect(await chat.exited).toBe(0);
    expect(chat.stdout.text).toContain('General Kenobi.\n');
    expect(server.framesOf('CPP_STREAM_STOP')).toEqual([]);
  });

  it('anchors and branches from the anchored node', async () => {
    const { server } = session;
    const chat = startChat(server.url, '--did', DID, '--thread', 'thread_anchor');
    await chat.stdout.until('thread thread_anchor');
    chat.type('First question');
    await server.frame('CPP_PROMPT');
    const firstAnswer = server.streaming('thread_anchor');
    server.complete('thread_anchor', firstAnswer);
    // The answer (empty) has ended on screen: the chat's mirror holds the question.
    await chat.stdout.until(/commands\n\n$/);
    // The question is message 1 of /tree, and the start of its id names it too.
    chat.type(`/anchor ${server.framesOf('CPP_PROMPT')[0]!.payload.newNodeId.slice(0, -3)}`);
    await chat.stdout.until('head is now');
    chat.type('Second question');
    const second = await server.frame('CPP_PROMPT', 2);
    expect(server.graph('thread_anchor').nodes[second.payload.newNodeId]?.parentId).toBe(
      server.framesOf('CPP_PROMPT')[0]!.payload.newNodeId,
    );
  });

  it('prints its usage and fails without a URL', async () => {
    const chat = startChat();
    expect(await chat.exited).toBe(2);
    expect(chat.stderr.text).toContain('usage: cpp-chat URL');
  });

  it('says so and fails when the connection drops', async () => {
    const { server } = session;
    const chat = startChat(server.url, '--did', DID, '--thread', 'thread_drop');
    await chat.stdout.until('thread thread_drop');
    server.peers[0]!.close(1001, 'going away');
    expect(await chat.exited).toBe(1);
    expect(chat.stderr.text).toContain('connection closed');
  });
});
