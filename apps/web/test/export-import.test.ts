import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Download } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { waitForFocus } from './support/chat-page.js';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;
/** A ChatGPT data export's conversations.json: four conversations, one of them "Rivers of Europe", with branches. */
const CHATGPT_EXPORT = fileURLToPath(
  new URL('../../../packages/protocol/test/fixtures/chatgpt-conversations.json', import.meta.url),
);

async function downloaded(download: Download): Promise<string> {
  return readFile((await download.path())!, 'utf8');
}

describe('export and import in the browser', () => {
  it(
    'exports a thread as Markdown and CPP JSON, imports that JSON and a ChatGPT export, and refuses a malformed file',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { page } = chat;
      const threads = page.getByRole('navigation', { name: 'Threads' });

      await chat.send('Tell me about the Danube');
      await chat.waitForAnswer('completed');
      await threads.getByRole('button', { name: /^Tell me about the Danube/ }).waitFor();

      // Export, by keyboard: the formats are offered with the focus on the first, Escape takes them back and gives the
      // focus back to Export, as does picking one.
      const exportThread = threads.getByRole('button', { name: 'Export thread' });
      await chat.openThreadMenu();
      await exportThread.focus();
      await page.keyboard.press('Enter');
      const formats = threads.getByRole('group', { name: 'Export thread as' });
      await waitForFocus(formats.getByRole('button', { name: 'Export as Markdown (.md)' }));
      await screenshot(page, 'thread-export');
      await page.keyboard.press('Escape');
      await formats.waitFor({ state: 'detached' });
      await waitForFocus(exportThread);

      await page.keyboard.press('Enter');
      await waitForFocus(formats.getByRole('button', { name: 'Export as Markdown (.md)' }));
      let download = page.waitForEvent('download');
      await page.keyboard.press('Enter');
      const markdownFile = await download;
      await waitForFocus(exportThread);
      expect(markdownFile.suggestedFilename()).toMatch(/^Tell-me-about-the-Danube.*\.md$/);
      const markdown = await downloaded(markdownFile);
      expect(markdown).toContain('Tell me about the Danube');
      // The roles are bold lines, not headings that would mix with the answer's own.
      expect(markdown).toContain('**User**\n\nTell me about the Danube\n\n---\n\n**Assistant**\n\n');
      expect(markdown).not.toMatch(/^#+ (User|Assistant)/m);

      await threads.getByRole('button', { name: 'Export thread' }).click();
      download = page.waitForEvent('download');
      await formats.getByRole('button', { name: 'Export as CPP JSON (.json)' }).click();
      const jsonFile = await download;
      expect(jsonFile.suggestedFilename()).toMatch(/\.json$/);
      const exported = JSON.parse(await downloaded(jsonFile));
      expect(exported).toMatchObject({ format: 'cpp-thread', formatVersion: 1, thread: { threadId: chat.threadId() } });
      expect(
        Object.values(exported.thread.nodes as Record<string, { content: string }>).some(
          (node) => node.content === 'Tell me about the Danube',
        ),
      ).toBe(true);

      // Import: the JSON just exported comes back as a second thread, told apart from the first by its title, and
      // opens, as a notice says.
      const exportedThreadId = chat.threadId();
      const picker = threads.getByLabel('File to import: a CPP JSON export or a ChatGPT conversations.json');
      await picker.setInputFiles(await jsonFile.path());
      await page.getByRole('status').getByText('Imported “Tell me about the Danube (copy)”: it is open now.').waitFor();
      const copy = threads.getByRole('button', { name: /^Tell me about the Danube \(copy\)/ });
      await copy.waitFor();
      expect(await threads.getByRole('button', { name: /^Tell me about the Danube/ }).count()).toBe(2);
      await page.waitForFunction((id) => !window.location.hash.includes(id), exportedThreadId);
      expect(await copy.getAttribute('aria-current')).toBe('page');
      await chat.page.getByRole('log').getByText('Tell me about the Danube', { exact: true }).waitFor();
      expect(chat.frames.sent.find((frame) => frame.type === 'CPP_THREAD_IMPORT')?.payload).toMatchObject({
        format: 'cpp-thread',
      });

      await picker.setInputFiles(CHATGPT_EXPORT);
      await page
        .getByRole('status')
        .getByText(/^Imported \d+ threads; the first, “.+”, is open now\.$/)
        .waitFor();
      await threads.getByRole('button', { name: /^Rivers of Europe/ }).waitFor();
      await threads.getByRole('button', { name: /^Plotting with code/ }).waitFor();
      expect(chat.frames.sent.filter((frame) => frame.type === 'CPP_THREAD_IMPORT').at(-1)?.payload).toMatchObject({
        format: 'chatgpt',
      });
      const listed = await threads.getByRole('listitem').count();

      // Malformed files: said in words where the UI shows its errors; nothing imported.
      const sentBefore = chat.frames.sent.filter((frame) => frame.type === 'CPP_THREAD_IMPORT').length;
      await picker.setInputFiles({
        name: 'broken.json',
        mimeType: 'application/json',
        buffer: Buffer.from('{"format": "cpp-thread",'),
      });
      await page.getByText(/^Nothing was imported: the file is not JSON/).waitFor();
      await picker.setInputFiles({
        name: 'other.json',
        mimeType: 'application/json',
        buffer: Buffer.from('{"hello": 1}'),
      });
      await page.getByText(/^Nothing was imported: the file is neither a CPP thread export/).waitFor();
      expect(chat.frames.sent.filter((frame) => frame.type === 'CPP_THREAD_IMPORT')).toHaveLength(sentBefore);
      // One the server refuses: a conversation whose node names a child that is not there.
      const half = [
        { title: 'Half imported', mapping: { a: { id: 'a', message: null, parent: null, children: ['b'] } } },
      ];
      await picker.setInputFiles({
        name: 'conversations.json',
        mimeType: 'application/json',
        buffer: Buffer.from(JSON.stringify(half)),
      });
      const refused = page.getByRole('alert').locator('.error[data-code]');
      await refused.waitFor();
      expect(await refused.textContent()).toMatch(/^Nothing was imported: conversation 1 \(Half imported\): .*mapping/);
      expect(await threads.getByRole('listitem').count()).toBe(listed);
      expect(await threads.getByRole('button', { name: /^Half imported/ }).count()).toBe(0);
      await screenshot(page, 'thread-import-refused');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
