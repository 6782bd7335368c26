import { describe, expect, it } from 'vitest';
import { PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('at phone width (375 px)', () => {
  it(
    'fits the screen, and opens the thread list and the tree as panels',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat(await harness.newContext(PHONE));
      await chat.send('A question asked on a phone, long enough to wrap over several lines of a narrow screen');
      await chat.waitForAnswer('completed');
      const overflow = () =>
        chat.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(await overflow()).toBe(0);
      const threads = chat.page.getByRole('navigation', { name: 'Threads' });
      expect(await threads.isVisible()).toBe(false);
      await screenshot(chat.page, 'phone-chat');

      const threadsToggle = chat.page.getByRole('button', { name: '☰ Threads', exact: true });
      await threadsToggle.click();
      expect(await threadsToggle.getAttribute('aria-expanded')).toBe('true');
      await threads.waitFor();
      await screenshot(chat.page, 'phone-threads');
      await chat.page.keyboard.press('Escape');
      await threads.waitFor({ state: 'hidden' });

      await chat.page.getByRole('button', { name: 'Tree' }).click();
      const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });
      await tree.waitFor();
      expect(await tree.locator('.tree-node').count()).toBe(2);
      await screenshot(chat.page, 'phone-tree');
      expect(await overflow()).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
