import { describe, expect, it } from 'vitest';
import type { ChatPage } from './support/chat-page.js';
import type { RecordedFrame } from './support/frame-recorder.js';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

/** A node's content in a structural update (patch or sync) that carries it. */
function contentIn(frame: RecordedFrame, nodeId: string): string | undefined {
  if (frame.type !== 'CPP_GRAPH_PATCH' && frame.type !== 'CPP_SYNC_GRAPH') return undefined;
  return (frame.payload.nodes as Record<string, { content: string }>)[nodeId]?.content;
}

/** The server's final content of a node, from the last structural update the page received about it. */
function serverContent(chat: ChatPage, nodeId: string): string | undefined {
  const update = chat.frames.received.findLast((frame) => contentIn(frame, nodeId) !== undefined);
  return update && contentIn(update, nodeId);
}

describe('pivot and stop in the browser', () => {
  it(
    'pivots mid-stream, and the interrupted answer shows exactly the cut the server made',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const context = await harness.newContext();
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      const chat = await harness.openChat(context);
      await chat.send('Tell me about trees');
      const first = await chat.waitForAnswer('streaming', { minLength: 120 });
      // The note about pivoting shows once the person types, not on every answer that streams.
      expect(await chat.page.getByText('Sending now pivots').count()).toBe(0);

      await chat.composer.fill('Actually, tell me about rivers');
      await chat.page.getByText('Sending now pivots').waitFor();
      expect(await chat.page.locator('.tree-node.status-streaming.is-head').count()).toBe(1);
      await screenshot(chat.page, 'pivot-typing');
      await chat.composer.press('Enter');

      const halted = await chat.frames.receivedFrame((frame) => frame.type === 'CPP_STREAM_HALTED');
      const pivot = chat.frames.lastSent('CPP_PIVOT_INIT')!;
      expect(pivot.payload).toMatchObject({
        interruptedNodeId: first.id,
        userPrompt: 'Actually, tell me about rivers',
      });
      // What the page had shown when the person pressed Enter is what the server kept.
      expect(halted.payload).toMatchObject({
        interruptedNodeId: first.id,
        reason: 'pivot',
        finalContentLength: pivot.payload.receivedContentLength,
      });
      const cut = halted.payload.finalContentLength as number;
      expect(cut).toBeGreaterThanOrEqual(first.length);

      const second = await chat.waitForAnswer('streaming', { minLength: 65, otherThan: first.id });
      const shown = await chat.messages();
      expect(shown.map((message) => [message.role, message.status])).toEqual([
        ['user', 'completed'],
        ['assistant', 'interrupted'],
        ['user', 'completed'],
        ['assistant', 'streaming'],
      ]);
      const interrupted = shown[1]!;
      expect(interrupted.length).toBe(cut);
      await chat.frames.receivedFrame((frame) => contentIn(frame, first.id)?.length === cut);
      expect(serverContent(chat, first.id)).toHaveLength(cut);
      // The page holds exactly the server's text (the answer is Markdown, so its Copy tells, not the rendered text).
      await chat.action(first.id, 'Copy').click();
      await chat.action(first.id, 'Copied').waitFor();
      expect(await chat.page.evaluate(() => navigator.clipboard.readText())).toBe(serverContent(chat, first.id));
      expect(await chat.message(first.id).locator('.cut-note').textContent()).toBe(
        `✂ Interrupted: cut at ${cut} characters`,
      );
      expect(second.text.startsWith('(demo model, turn 3) You said: "Actually, tell me about rivers".')).toBe(true);
      await screenshot(chat.page, 'pivot-branched');

      // Esc stops the new answer where the page is.
      await chat.composer.press('Escape');
      const stopped = await chat.frames.receivedFrame(
        (frame) => frame.type === 'CPP_STREAM_HALTED' && frame.payload.reason === 'stop',
      );
      const stop = chat.frames.lastSent('CPP_STREAM_STOP')!;
      expect(stopped.payload).toMatchObject({
        interruptedNodeId: second.id,
        finalContentLength: stop.payload.receivedContentLength,
      });
      const last = await chat.waitForAnswer('interrupted');
      expect(last).toMatchObject({ id: second.id, length: stopped.payload.finalContentLength });
      expect(await chat.page.getByRole('button', { name: 'Stop' }).count()).toBe(0);
      await screenshot(chat.page, 'pivot-stopped');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'stops with the Stop button, keeps the head, and continues the branch from the cut answer',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat();
      await chat.send('Start something long');
      const first = await chat.waitForAnswer('streaming', { minLength: 40 });
      await chat.page.getByRole('button', { name: 'Stop' }).click();
      const stopped = await chat.waitForAnswer('interrupted');
      expect(stopped.id).toBe(first.id);
      expect(await chat.message(first.id).getAttribute('class')).toContain('is-head');

      await chat.send('Go on from there');
      await chat.waitForAnswer('streaming', { minLength: 1 });
      expect((await chat.messages()).map((message) => message.status)).toEqual([
        'completed',
        'interrupted',
        'completed',
        'streaming',
      ]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
