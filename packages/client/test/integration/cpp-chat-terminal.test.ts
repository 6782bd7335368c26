import { afterEach, describe, expect, it } from 'vitest';
import { DID, useFakeSession } from '../support/session.js';
import { ChatTerminal } from '../support/terminal.js';

// cpp-chat on a terminal, as a person sees it: a pseudo-terminal 60 columns wide, the scripted server streaming.
describe('cpp-chat on a terminal', () => {
  const session = useFakeSession();
  const terminals: ChatTerminal[] = [];
  /** cpp-chat on a thread of the scripted server, once it waits for input. */
  const startChat = async (threadId: string) => {
    const terminal = await ChatTerminal.start([session.server.url, '--did', DID, '--thread', threadId]);
    terminals.push(terminal);
    await terminal.until((rows) => rows.at(-1) === '›');
    return terminal;
  };
  afterEach(async () => {
    for (const terminal of terminals.splice(0)) await terminal.close();
  });

  it('keeps the line being typed below the streaming answer, and a pivot cuts the answer at what the screen showed', async () => {
    const { server } = session;
    const chat = await startChat('thread_tty');

    await chat.enter('Explain spiking neural networks.');
    await server.frame('CPP_PROMPT');
    const first = server.streaming('thread_tty');
    server.chunk('thread_tty', first, 'Spiking networks fire ');
    await chat.until((rows) => rows.at(-2) === 'Spiking networks fire');

    // Half a pivot typed, and the answer goes on streaming: each keeps to its own rows.
    await chat.type('Rust inst');
    await chat.until((rows) => rows.at(-1) === '› Rust inst');
    server.chunk('thread_tty', first, 'in discrete events, and a neuron that fires resets its potential to rest.');
    expect(await chat.until((rows) => rows.at(-1) === '› Rust inst' && rows.at(-2)!.endsWith('to rest.'))).toEqual([
      'thread thread_tty (0 messages); /help lists the commands',
      '› Explain spiking neural networks.',
      // Rows break at the width, as the terminal itself would break them.
      'Spiking networks fire in discrete events, and a neuron that',
      'fires resets its potential to rest.',
      '› Rust inst',
    ]);

    await chat.enter('ead.');
    const pivot = await server.frame('CPP_PIVOT_INIT');
    expect(pivot.payload).toMatchObject({
      interruptedNodeId: first,
      receivedContentLength: 95,
      userPrompt: 'Rust instead.',
    });
    const second = server.streaming('thread_tty');
    server.chunk('thread_tty', second, 'Rust has ownership.');
    server.complete('thread_tty', second);
    expect(await chat.until((rows) => rows.includes('Rust has ownership.') && rows.at(-1) === '›')).toEqual([
      'thread thread_tty (0 messages); /help lists the commands',
      '› Explain spiking neural networks.',
      'Spiking networks fire in discrete events, and a neuron that',
      'fires resets its potential to rest.',
      '› Rust instead.',
      '[interrupted after 95 characters]',
      'Rust has ownership.',
      '',
      '›',
    ]);

    // The tree numbers its messages, and a command takes the number.
    await chat.enter('/tree');
    await chat.until((rows) => rows.some((row) => row.endsWith('<- head')));
    await chat.enter('/anchor 2');
    const anchored = await chat.until((rows) => rows.some((row) => row.startsWith('head is now')));
    expect(anchored.join('\n')).toContain(`head is now ${first};`);
    expect(server.graph('thread_tty').activeHeadMessageId).toBe(first);

    await chat.enter('/quit');
    expect(await chat.exited()).toBe(0);
  });

  it('shows an answer without the escape sequences it carries, and Ctrl-C stops it', async () => {
    const { server } = session;
    const chat = await startChat('thread_hostile');
    await chat.enter('Hello');
    await server.frame('CPP_PROMPT');
    const answer = server.streaming('thread_hostile');
    server.chunk('thread_hostile', answer, 'Hi\x1b[2J\x1b[1;1H there\x07.');
    await chat.until((rows) => rows.at(-2) === 'Hi[2J[1;1H there.');

    await chat.press('C-c');
    const stop = await server.frame('CPP_STREAM_STOP');
    expect(stop.payload).toMatchObject({ nodeId: answer, receivedContentLength: 20 });
  });
});
