import { describe, expect, it } from 'vitest';
import { waitForFocus } from './support/chat-page.js';
import { openLongThread } from './support/long-thread.js';
import { PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('thread operations in the browser', () => {
  it(
    'renames, searches and deletes threads from the thread list',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const threads = chat.page.getByRole('navigation', { name: 'Threads' });

      await chat.send('Tell me about the Danube');
      await chat.waitForAnswer('completed');
      const first = chat.threadId();
      await threads.getByRole('button', { name: /^Tell me about the Danube/ }).waitFor();

      // Rename, Export and Delete are in the active thread's menu, closed until asked for.
      expect(await threads.getByRole('button', { name: 'Rename thread' }).count()).toBe(0);
      await chat.openThreadMenu();
      await threads.getByRole('button', { name: 'Rename thread' }).click();
      const title = threads.getByRole('textbox', { name: 'Thread title' });
      await title.fill('Rivers of Europe');
      await title.press('Enter');
      await threads.getByRole('button', { name: /^Rivers of Europe/ }).waitFor();
      expect(chat.frames.sent.some((frame) => frame.type === 'CPP_THREAD_RENAME')).toBe(true);

      await threads.getByRole('button', { name: '+ New thread' }).click();
      await chat.page.waitForFunction(
        (previous) => decodeURIComponent(window.location.hash.slice(1)) !== previous,
        first,
      );
      await chat.send('Something about mountains');
      await chat.waitForAnswer('completed');
      const second = chat.threadId();

      await threads.getByRole('searchbox', { name: 'Search threads' }).fill('danub');
      const results = threads.getByRole('list', { name: 'Search results' });
      await results.getByRole('button').first().waitFor();
      // One row for the thread, its title once, and under it each message that matched.
      const rows = results.locator('> li');
      expect(await rows.count()).toBe(1);
      expect(await rows.locator('.thread-title').allTextContents()).toEqual(['Rivers of Europe']);
      const snippets = await rows.locator('.search-snippet').allTextContents();
      expect(snippets.length).toBeGreaterThanOrEqual(1);
      expect(snippets.every((text) => /danub/i.test(text) && !text.includes('Rivers of Europe'))).toBe(true);
      expect(await rows.locator('.thread-meta').textContent()).toBe(
        `${snippets.length} matching ${snippets.length === 1 ? 'message' : 'messages'}`,
      );
      // The words that matched are marked in each snippet.
      expect(await results.locator('mark').first().textContent()).toBe('Danub');
      await screenshot(chat.page, 'thread-search');
      // A message hit opens its thread.
      await results.getByRole('button').filter({ hasText: 'Tell me about the Danube' }).first().click();
      await chat.page.waitForFunction((wanted) => decodeURIComponent(window.location.hash.slice(1)) === wanted, first);
      // …and brings the message it found into view, with the focus on it.
      await chat.page.waitForFunction(
        () => document.activeElement?.closest('article')?.textContent?.includes('Tell me about the Danube') ?? false,
      );

      await threads.getByRole('searchbox', { name: 'Search threads' }).fill('');
      // Deleting asks first, in place; Cancel keeps the thread and gives the focus back to its Delete.
      const deleteThread = threads.getByRole('button', { name: 'Delete thread' });
      await chat.openThreadMenu();
      await deleteThread.click();
      const confirm = threads.getByRole('group', { name: 'Confirm deletion' });
      await waitForFocus(confirm.getByRole('button', { name: 'Delete' }));
      await screenshot(chat.page, 'thread-delete-confirm');
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await waitForFocus(deleteThread);
      expect(chat.frames.sent.some((frame) => frame.type === 'CPP_THREAD_DELETE')).toBe(false);
      await deleteThread.click();
      await confirm.getByRole('button', { name: 'Delete' }).click();
      await threads.getByRole('button', { name: /^Rivers of Europe/ }).waitFor({ state: 'detached' });
      await chat.page.waitForFunction((wanted) => decodeURIComponent(window.location.hash.slice(1)) === wanted, second);
      expect(chat.frames.lastReceived('CPP_THREAD_DELETED')?.payload).toEqual({ threadId: first });
      expect(await threads.getByRole('heading').allTextContents()).toEqual(['Today']);
      // The focus was in the deleted thread's item: it goes to the thread shown in its place…
      await waitForFocus(threads.getByRole('button', { name: /^Something about mountains/ }));
      // …or, when no thread is left, to New thread.
      await chat.openThreadMenu();
      await deleteThread.click();
      await confirm.getByRole('button', { name: 'Delete' }).click();
      await threads.getByRole('button', { name: /^Something about mountains/ }).waitFor({ state: 'detached' });
      await waitForFocus(threads.getByRole('button', { name: '+ New thread' }));
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'searches a quoted phrase as words one after another, and marks its words',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await openLongThread(chat);
      const threads = chat.page.getByRole('navigation', { name: 'Threads' });
      const search = threads.getByRole('searchbox', { name: 'Search threads' });
      const snippets = threads.getByRole('list', { name: 'Search results' }).locator('.search-snippet');

      // Unquoted, "topic 2" finds "Question number 21, about topic 1" too: both words are in it.
      await search.fill('topic 2');
      await snippets.first().waitFor();
      expect((await snippets.allTextContents()).some((text) => !/topic 2/i.test(text))).toBe(true);

      await search.fill('"topic 2"');
      await chat.page.waitForFunction(() => {
        const shown = [...document.querySelectorAll('.search-snippet')];
        return shown.length > 0 && shown.every((element) => /topic 2/i.test(element.textContent ?? ''));
      });
      expect(chat.frames.lastSent('CPP_THREAD_SEARCH')!.payload.query).toBe('"topic 2"');
      const found = await snippets.allTextContents();
      expect(found.length).toBeGreaterThan(0);
      expect(await snippets.first().locator('mark').allTextContents()).toEqual(expect.arrayContaining(['topic', '2']));
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'takes Esc at the question before a delete, or at the export choice, as a no to it alone: the panel stays open, the answer streams on',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat(await harness.newContext(PHONE));
      await chat.send('Tell me a long story');
      await chat.waitForAnswer('streaming', { minLength: 20 });
      const threadsToggle = chat.page.getByRole('button', { name: '☰ Threads', exact: true });
      await threadsToggle.click();
      const threads = chat.page.getByRole('navigation', { name: 'Threads' });
      const deleteThread = threads.getByRole('button', { name: 'Delete thread' });
      await chat.openThreadMenu();
      await deleteThread.click();
      const confirm = threads.getByRole('group', { name: 'Confirm deletion' });
      await waitForFocus(confirm.getByRole('button', { name: 'Delete' }));

      const { length } = await chat.lastMessage();
      await chat.page.keyboard.press('Escape');
      await confirm.waitFor({ state: 'detached' });
      expect(await threadsToggle.getAttribute('aria-expanded')).toBe('true');
      await waitForFocus(deleteThread);

      const exportThread = threads.getByRole('button', { name: 'Export thread' });
      await exportThread.click();
      const formats = threads.getByRole('group', { name: 'Export thread as' });
      await waitForFocus(formats.getByRole('button', { name: 'Export as Markdown (.md)' }));
      await chat.page.keyboard.press('Escape');
      await formats.waitFor({ state: 'detached' });
      expect(await threadsToggle.getAttribute('aria-expanded')).toBe('true');
      await waitForFocus(exportThread);

      // Esc at the menu closes it alone, with the focus back on its button.
      await chat.page.keyboard.press('Escape');
      await exportThread.waitFor({ state: 'detached' });
      await waitForFocus(threads.getByRole('button', { name: 'Thread actions' }));
      expect(await threadsToggle.getAttribute('aria-expanded')).toBe('true');

      await chat.waitForAnswer('streaming', { minLength: length + 20 });
      expect(
        chat.frames.sent.some((frame) => frame.type === 'CPP_STREAM_STOP' || frame.type === 'CPP_THREAD_DELETE'),
      ).toBe(false);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
