import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('message actions in the browser', () => {
  it(
    'copies any message and says "Copied"',
    async () => {
      const harness = await WebHarness.start();
      const context = await harness.newContext();
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      const chat = await harness.openChat(context);
      const { second } = await chat.twoTurns();
      const clipboard = () => chat.page.evaluate(() => navigator.clipboard.readText());

      const [prompt] = await chat.messages();
      await chat.message(prompt!.id).hover();
      await screenshot(chat.page, 'actions-hover');
      await chat.action(prompt!.id, 'Copy').click();
      await chat.action(prompt!.id, 'Copied').waitFor();
      expect(await clipboard()).toBe('one');

      // An answer copies as the Markdown the model wrote, not as the page's text.
      await chat.action(second.id, 'Copy').click();
      await chat.action(second.id, 'Copied').waitFor();
      expect(await clipboard()).toBe(chat.frames.streamedText(second.id));
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'makes the conversation one tab stop, with arrows between messages and through their actions',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { first, second } = await chat.twoTurns();
      const focused = () =>
        chat.page.evaluate(() => {
          const element = document.activeElement as HTMLElement | null;
          return {
            node: element?.closest<HTMLElement>('article')?.dataset.nodeId,
            label: element?.getAttribute('aria-label') ?? element?.textContent?.trim(),
          };
        });

      // Only one element of the whole chat takes Tab: the newest message.
      const stops = await chat.messageList.evaluate(
        (list) =>
          [...list.querySelectorAll<HTMLElement>('article, button')].filter((element) => element.tabIndex >= 0).length,
      );
      expect(stops).toBe(1);
      await chat.page.keyboard.press('Shift+Tab');
      expect(await focused()).toMatchObject({ node: second.id });

      await chat.page.keyboard.press('ArrowUp');
      await chat.page.keyboard.press('ArrowUp');
      expect((await focused()).node).toBe(first.id);
      await chat.page.keyboard.press('ArrowRight');
      expect(await focused()).toEqual({ node: first.id, label: 'Copy' });
      await chat.page.keyboard.press('ArrowRight');
      expect(await focused()).toEqual({ node: first.id, label: 'Regenerate' });
      await screenshot(chat.page, 'actions-keyboard');
      await chat.page.keyboard.press('ArrowLeft');
      await chat.page.keyboard.press('ArrowLeft');
      // Wraps round to the message's last button: its code block's Copy.
      expect(await focused()).toEqual({ node: first.id, label: expect.stringMatching(/^Copy \w+ code$/) });
      await chat.page.keyboard.press('ArrowLeft');
      expect(await focused()).toEqual({ node: first.id, label: 'Delete' });
      await chat.page.keyboard.press('Escape');
      expect(await focused()).toMatchObject({ node: first.id });
      await chat.page.keyboard.press('End');
      expect((await focused()).node).toBe(second.id);

      // Enter on an action does it: the first answer is anchored, and the message that held the focus stays the stop.
      await chat.page.keyboard.press('Home');
      await chat.page.keyboard.press('ArrowDown');
      for (const _ of ['Copy', 'Regenerate', 'Anchor']) await chat.page.keyboard.press('ArrowRight');
      expect(await focused()).toEqual({ node: first.id, label: 'Anchor' });
      await chat.page.keyboard.press('Enter');
      await chat.page.getByText('Your next message branches from').waitFor();
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'continues a stopped answer in the same message, from where it stopped',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat();
      await chat.send('Tell me a long story');
      await chat.waitForAnswer('streaming', { minLength: 60 });
      await chat.page.getByRole('button', { name: 'Stop' }).click();
      const stopped = await chat.waitForAnswer('interrupted');
      // Only a cut answer offers Continue.
      expect(await chat.action(stopped.id, 'Continue').count()).toBe(1);
      await screenshot(chat.page, 'actions-continue');

      await chat.action(stopped.id, 'Continue').click();
      const continued = await chat.waitForAnswer('streaming', { minLength: stopped.length + 20 });
      expect(continued.id).toBe(stopped.id);
      expect(chat.frames.lastSent('CPP_CONTINUE')?.payload).toMatchObject({ nodeId: stopped.id });
      expect((await chat.messages()).length).toBe(2);
      expect(await chat.action(stopped.id, 'Continue').count()).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
