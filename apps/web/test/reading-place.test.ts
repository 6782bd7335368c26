import type { Locator } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { waitForFocus, type ChatPage } from './support/chat-page.js';
import { openLongThread } from './support/long-thread.js';
import { WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

/** Where `element`'s top is, in px below the top of the message list's visible area. */
async function offsetInList(chat: ChatPage, element: Locator): Promise<number> {
  const [box, list] = await Promise.all([element.boundingBox(), chat.messageList.boundingBox()]);
  return box!.y - list!.y;
}

/** Whether `element` is entirely inside the message list's visible area. */
async function inView(chat: ChatPage, element: Locator): Promise<boolean> {
  const [box, list] = await Promise.all([element.boundingBox(), chat.messageList.boundingBox()]);
  return box!.y >= list!.y - 1 && box!.y + box!.height <= list!.y + list!.height + 1;
}

function scrollListToTop(chat: ChatPage): Promise<void> {
  return chat.messageList.evaluate((element) => {
    element.scrollTop = 0;
    element.dispatchEvent(new Event('scroll'));
  });
}

describe('the reading place in the browser', () => {
  it(
    'shows a message sent while scrolled up, and its answer',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await openLongThread(chat);
      await scrollListToTop(chat);
      await chat.send('A question sent from far above');
      const answer = await chat.waitForAnswer('completed');
      const list = chat.messageList;
      expect(
        await list.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight),
      ).toBeLessThan(2);
      // The answer is taller than the list: its end is in view, and the prompt above it was passed on the way down.
      const [box, shown] = await Promise.all([chat.message(answer.id).boundingBox(), list.boundingBox()]);
      expect(box!.y + box!.height).toBeLessThanOrEqual(shown!.y + shown!.height + 1);
      expect(await chat.page.getByRole('button', { name: '↓ Latest' }).count()).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'offers a way back to the latest while the person reads above a streaming answer',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat();
      await openLongThread(chat, 12);
      await chat.send('Tell me about trees');
      const streaming = await chat.waitForAnswer('streaming', { minLength: 20 });
      await scrollListToTop(chat);
      const jump = chat.page.getByRole('button', { name: '↓ Latest' });
      await jump.waitFor();
      // The stream goes on without pulling the reader down.
      const length = (await chat.lastMessage()).length;
      await chat.waitForAnswer('streaming', { minLength: length + 40 });
      expect(await chat.messageList.evaluate((element) => element.scrollTop)).toBe(0);

      await jump.click();
      await jump.waitFor({ state: 'detached' });
      await chat.waitForAnswer('streaming', { minLength: length + 80 });
      const list = chat.messageList;
      expect(
        await list.evaluate((element) => element.scrollHeight - element.scrollTop - element.clientHeight),
      ).toBeLessThan(80);
      expect(await inView(chat, chat.message(streaming.id).locator('.message-body > :last-child'))).toBe(true);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'keeps a switched message where it was, and the focus on the switcher and the regenerated answer',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await openLongThread(chat);
      const articles = chat.messageList.locator('article.message');
      const original = articles.nth(21);
      const originalId = await original.getAttribute('data-node-id');
      await original.scrollIntoViewIfNeeded();
      await original.getByRole('button', { name: 'Regenerate' }).click();
      // The branch of the new answer first: until it shows, the last message is the long thread's own last answer,
      // completed too, and a read of the place while the new answer still streamed (the list following it) failed
      // the run now and then.
      await chat.page.waitForFunction(() => document.querySelectorAll('[role="log"] article.message').length === 22);
      await chat.waitForAnswer('completed', { otherThan: originalId! });

      // Back to the original: the branch below it comes back, and the message stays where the switcher was used.
      const regenerated = articles.nth(21);
      const previous = regenerated.getByRole('button', { name: 'Previous branch' });
      await previous.scrollIntoViewIfNeeded();
      // Measured and clicked in one task of the page: the list may still move between a measure taken here and
      // Playwright's click (the answer's last patch lands, a lazily loaded renderer redraws a message, and the list
      // follows the newest text), and the place to keep is where the message was when the switcher was used.
      const before = await previous.evaluate((button: HTMLElement) => {
        const top = (selector: string) => button.closest(selector)!.getBoundingClientRect().top;
        const offset = top('article.message') - top('[role="log"]');
        button.click();
        return offset;
      });
      await chat.page.waitForFunction(() => document.querySelectorAll('[role="log"] article.message').length === 48);
      expect(Math.abs((await offsetInList(chat, chat.message(originalId!))) - before)).toBeLessThanOrEqual(2);

      // By keyboard: the focus stays on the switcher of the message shown instead.
      await chat.message(originalId!).getByRole('button', { name: 'Next branch' }).focus();
      await chat.page.keyboard.press('Enter');
      await chat.page.waitForFunction(() => document.querySelectorAll('[role="log"] article.message').length === 22);
      await waitForFocus(articles.nth(21).getByRole('button', { name: 'Previous branch' }));

      // Regenerate by keyboard: the focus goes to the answer that replaces the one it was on.
      await articles.nth(21).getByRole('button', { name: 'Regenerate' }).focus();
      await chat.page.keyboard.press('Enter');
      const third = articles.nth(21).and(chat.page.locator('[aria-label="Assistant"], [aria-label^="Assistant,"]'));
      await chat.page.getByRole('group', { name: 'Branch 3 of 3' }).waitFor();
      await waitForFocus(third);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'gives the focus back to the message when an edit is cancelled or sent from the keyboard',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await chat.twoTurns();
      const prompt = chat.messageList.locator('article.message').nth(2);
      await prompt.getByRole('button', { name: 'Edit' }).focus();
      await chat.page.keyboard.press('Enter');
      const box = prompt.getByRole('textbox', { name: 'Edit message' });
      await waitForFocus(box);
      await chat.page.keyboard.press('Escape');
      await waitForFocus(prompt);

      await prompt.getByRole('button', { name: 'Edit' }).focus();
      await chat.page.keyboard.press('Enter');
      await waitForFocus(box);
      await box.fill('two, differently');
      await chat.page.keyboard.press('Enter');
      const edited = chat.messageList.locator('article.message').nth(2);
      await edited.getByRole('group', { name: 'Branch 2 of 2' }).waitFor();
      await waitForFocus(edited);
      expect(await edited.locator('.user-text').textContent()).toBe('two, differently');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
