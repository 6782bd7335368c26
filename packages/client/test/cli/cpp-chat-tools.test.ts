import { DemoToolsProvider, demoTools } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../server/test/support/start-server.js';
import { ChatProcess } from '../support/chat-process.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('cpp-chat and tool calls', () => {
  it('shows each call on a line of its own with its state, and asks for approval inline', async () => {
    const server = await startServer({
      models: [{ provider: new DemoToolsProvider({ delayMs: 0 }) }],
      tools: demoTools({ now: () => Date.UTC(2026, 11, 5), countDelayMs: 0 }),
    });
    cleanups.push(() => server.close());
    const chat = new ChatProcess([server.url, '--did', 'did:example:tools']);
    cleanups.push(() => chat.kill());
    await chat.stdout.until('/help lists the commands');

    chat.type('What time is it? Then count.');
    await chat.stdout.until('That was an answer that called two tools.');
    expect(chat.stdout.text).toContain('[tool clock: runs {}]');
    expect(chat.stdout.text).toContain('[tool clock: done: 2026-12-05T00:00:00.000Z]');
    expect(chat.stdout.text).toContain('[tool count_to: 3/5 counted 3 of 5]');
    expect(chat.stdout.text).toContain('[tool count_to: done: 1 2 3 4 5]');

    chat.type('Keep a note: buy milk');
    await chat.stdout.until(
      '[tool save_note {"text":"Keep a note: buy milk"} waits for your approval: /approve or /deny REASON]',
    );
    chat.type('/deny not today');
    await chat.stdout.until('[tool save_note: denied]');
    await chat.stdout.until('You did not approve it, so I kept nothing.');
    chat.type('/approve');
    await chat.stderr.until('no tool call waits for approval');

    chat.type('/quit');
    expect(await chat.exited).toBe(0);
  });
});
