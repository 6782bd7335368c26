import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('two tabs on one thread', () => {
  it(
    'stream, stop and move the head in step',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const context = await harness.newContext();
      const tabA = await harness.openChat(context);
      await tabA.send('Seen from two tabs');
      const answer = await tabA.waitForAnswer('streaming', { minLength: 40 });

      // The second tab joins mid-stream and follows the same answer.
      const tabB = await harness.openChat(context, tabA.page.url());
      const joined = await tabB.waitForAnswer('streaming', { minLength: answer.length + 20 });
      expect(joined.id).toBe(answer.id);
      await screenshot(tabB.page, 'sync-tab-b-streaming');

      await tabA.page.getByRole('button', { name: 'Stop' }).click();
      const [cutA, cutB] = await Promise.all([tabA.waitForAnswer('interrupted'), tabB.waitForAnswer('interrupted')]);
      expect(cutB).toEqual(cutA);
      expect(cutA.length).toBe(tabA.frames.lastReceived('CPP_STREAM_HALTED')!.payload.finalContentLength);

      // The head moved in one tab is the head in the other: a second exchange, then tab B anchors the first answer.
      await tabA.send('A second question');
      const second = await tabA.waitForAnswer('streaming', { minLength: 1, otherThan: answer.id });
      await tabA.page.getByRole('button', { name: 'Stop' }).click();
      await tabB.waitForAnswer('interrupted', { otherThan: answer.id });
      await tabB.action(answer.id, 'Anchor').click();
      await tabA.message(answer.id).locator('[aria-pressed="true"]', { hasText: 'Anchor' }).waitFor();
      await tabA.page.getByText('Your next message branches from').waitFor();
      await screenshot(tabA.page, 'sync-tab-a-anchored');

      await tabA.send('A new branch, sent in tab A');
      const branched = await tabB.waitForAnswer('streaming', { minLength: 1, otherThan: second.id });
      expect((await tabB.messages()).map((message) => message.text)[2]).toBe('A new branch, sent in tab A');
      expect((await tabA.waitForAnswer('streaming')).id).toBe(branched.id);
      expect([...tabA.problems, ...tabB.problems]).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
