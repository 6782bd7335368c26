import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { pdfDocument, pngImage } from '../../../packages/server/test/support/test-files.js';
import { axeViolations } from './support/accessibility.js';
import type { ChatPage } from './support/chat-page.js';
import { waitForFocus } from './support/chat-page.js';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 120_000;

interface TestFile {
  name: string;
  mimeType: string;
  buffer: Buffer;
}

const png = (name: string, width: number, height: number): TestFile => ({
  name,
  mimeType: 'image/png',
  buffer: Buffer.from(pngImage(width, height)),
});
const pdf = (name: string, text: string): TestFile => ({
  name,
  mimeType: 'application/pdf',
  buffer: Buffer.from(pdfDocument(text)),
});

/** A `DataTransfer` in the page holding `files`, as a paste or a drop of files from the system gives one. */
function dataTransferOf(page: Page, files: readonly TestFile[]) {
  return page.evaluateHandle(
    (list) => {
      const data = new DataTransfer();
      for (const file of list) data.items.add(new File([new Uint8Array(file.bytes)], file.name, { type: file.type }));
      return data;
    },
    files.map((file) => ({ name: file.name, type: file.mimeType, bytes: [...file.buffer] })),
  );
}

/** Whether every image under the selector has loaded and decoded (the CSP and the ticket let it through). */
async function imagesShown(page: Page, selector: string): Promise<boolean> {
  return page
    .locator(selector)
    .evaluateAll((images) =>
      images.every((image) => (image as HTMLImageElement).complete && (image as HTMLImageElement).naturalWidth > 0),
    );
}

async function waitForImages(page: Page, selector: string, count: number): Promise<void> {
  await page.waitForFunction(
    ([wanted, least]) => {
      const images = [...document.querySelectorAll<HTMLImageElement>(wanted)];
      return images.length >= least && images.every((image) => image.complete && image.naturalWidth > 0);
    },
    [selector, count] as const,
  );
}

function tray(chat: ChatPage) {
  return chat.page.getByRole('list', { name: 'Files to send' });
}

/** Waits until every file of the tray is uploaded (none busy) and it holds `count`. */
async function waitForUploads(chat: ChatPage, count: number): Promise<void> {
  await chat.page.waitForFunction(
    (wanted) =>
      document.querySelectorAll('.attachment-draft').length === wanted &&
      document.querySelectorAll('.attachment-draft[aria-busy="true"]').length === 0,
    count,
  );
}

describe('attachments in the browser', () => {
  it(
    'attaches with the button, shows thumbnails before sending that can be removed, then the image in the message with a lightbox, all by keyboard',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const attach = chat.page.getByRole('button', { name: 'Attach', exact: true });

      // The picker, opened from the keyboard: Enter on the button, focused and pressed in one action, once the
      // conversation's opening focus is in the message box. With the focus given first and Enter pressed after, a
      // full run under load once saw no picker open.
      await waitForFocus(chat.composer);
      const [chooser] = await Promise.all([chat.page.waitForEvent('filechooser'), attach.press('Enter')]);
      expect(chooser.isMultiple()).toBe(true);
      await chooser.setFiles([png('raster plot.png', 64, 48), pdf('notes.pdf', 'Spiking neurons fire')]);
      await waitForUploads(chat, 2);
      // The image's preview is its own bytes, under the page's CSP; the PDF is a chip with its type and size.
      await waitForImages(chat.page, '.attachment-tray img', 1);
      expect(await chat.page.locator('.attachment-tray img').getAttribute('src')).toMatch(/^blob:/);
      const pdfDraft = tray(chat).getByRole('listitem').filter({ hasText: 'notes.pdf' });
      expect(await pdfDraft.locator('.attachment-meta').textContent()).toMatch(/^PDF · \d+ B$/);
      await screenshot(chat.page, 'attachments-tray');

      // Removed from the keyboard; the focus goes back to the message box.
      await tray(chat).getByRole('button', { name: 'Remove notes.pdf' }).focus();
      await chat.page.keyboard.press('Enter');
      await waitForUploads(chat, 1);
      await waitForFocus(chat.composer);

      await chat.send('What is in this plot?');
      const answer = await chat.waitForAnswer('completed');
      expect(answer.text).toContain('You attached the image "raster plot.png" (image/png, 64×48 pixels');
      expect(await tray(chat).count()).toBe(0);
      const prompt = chat.page.locator('article.message-user').last();
      expect(await prompt.locator('.user-text').textContent()).toBe('What is in this plot?');

      // The message shows the file the server keeps, through its URL with a ticket, under the page's CSP.
      await waitForImages(chat.page, '.message-attachments img', 1);
      expect(await prompt.locator('.message-attachments img').getAttribute('src')).toMatch(
        /^http:\/\/127\.0\.0\.1:\d+\/v1\/cpp\/attachments\/att_[\w-]+\?ticket=/,
      );
      expect(await imagesShown(chat.page, '.message-attachments img')).toBe(true);

      // The lightbox: opened with Enter, the full image in a modal dialog, closed with Esc, the focus back.
      const thumbnail = prompt.getByRole('button', { name: 'View raster plot.png' });
      await thumbnail.focus();
      await chat.page.keyboard.press('Enter');
      const lightbox = chat.page.getByRole('dialog', { name: 'raster plot.png' });
      await lightbox.waitFor();
      await waitForImages(chat.page, '.lightbox img', 1);
      expect(await lightbox.locator('figcaption').textContent()).toContain('64 × 48 pixels');
      await waitForFocus(lightbox.getByRole('button', { name: 'Close' }));
      await screenshot(chat.page, 'attachments-lightbox');
      await chat.page.keyboard.press('Escape');
      await lightbox.waitFor({ state: 'detached' });
      await waitForFocus(thumbnail);
      // Esc closed the image, and stopped nothing else.
      expect(await chat.page.locator('.message-attachments').count()).toBe(1);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'attaches a pasted screenshot and a PDF dropped on the chat, shows the PDF as a chip that downloads it, and says why a file was refused',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();

      // A screenshot pasted into the message box is attached, not pasted as text.
      const pasted = await dataTransferOf(chat.page, [png('image.png', 20, 10)]);
      await chat.composer.evaluate((box, clipboardData) => {
        box.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }));
      }, pasted);
      await waitForUploads(chat, 1);
      expect(await chat.composer.inputValue()).toBe('');

      // A PDF dragged over the chat: the chat says where it goes; dropped, it is attached.
      const dropped = await dataTransferOf(chat.page, [pdf('paper.pdf', 'Pivots in conversation trees')]);
      const list = chat.messageList;
      await list.dispatchEvent('dragenter', { dataTransfer: dropped });
      await list.dispatchEvent('dragover', { dataTransfer: dropped });
      await chat.page.locator('.drop-hint').waitFor();
      await list.dispatchEvent('drop', { dataTransfer: dropped });
      await chat.page.locator('.drop-hint').waitFor({ state: 'detached' });
      await waitForUploads(chat, 2);
      expect(await tray(chat).getByRole('listitem').allTextContents()).toEqual([
        expect.stringContaining('image.png'),
        expect.stringContaining('paper.pdf'),
      ]);

      await chat.send('Summarise the paper, and the screenshot.');
      const answer = await chat.waitForAnswer('completed');
      expect(answer.text).toContain('the image "image.png" (image/png, 20×10 pixels');
      expect(answer.text).toContain('the PDF "paper.pdf" (application/pdf');

      // The PDF is a chip with its name, type and size that downloads it (the server serves it as a download).
      const prompt = chat.page.locator('article.message-user').last();
      const chip = prompt.getByRole('link', { name: /paper\.pdf/ });
      expect(await chip.locator('.attachment-meta').textContent()).toMatch(/^PDF · \d+(\.\d)? (B|KB)$/);
      expect(await chip.getAttribute('download')).toBe('paper.pdf');
      const [download] = await Promise.all([chat.page.waitForEvent('download'), chip.click()]);
      expect(download.suggestedFilename()).toBe('paper.pdf');
      await waitForImages(chat.page, '.message-attachments img', 1);

      // A file the server does not take is refused at once, in words that say what it takes, and leaves the tray.
      const zip = await dataTransferOf(chat.page, [
        { name: 'archive.zip', mimeType: 'application/zip', buffer: Buffer.from([0x50, 0x4b, 0x03, 0x04, 0, 0, 0xff]) },
      ]);
      await chat.composer.evaluate((box, clipboardData) => {
        box.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }));
      }, zip);
      const refusal = chat.page.locator('.errors').getByText('Could not attach archive.zip: ');
      await refusal.waitFor();
      expect(await refusal.textContent()).toContain('accepted: PNG, JPEG, WebP or GIF images, PDF, or UTF-8 text');
      await waitForUploads(chat, 0);
      expect(chat.problems.filter((problem) => !problem.includes('415'))).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'sends a pasted screenshot with no words: the message shows the image alone, the answer describes it, the thread and the tree take its name; an edit may leave a prompt its file alone',
    async () => {
      const harness = await WebHarness.start();
      const context = await harness.newContext(undefined, { bypassCSP: true });
      const chat = await harness.openChat(context);
      const send = chat.page.getByRole('button', { name: 'Send', exact: true });
      expect(await send.isEnabled()).toBe(false);

      const pasted = await dataTransferOf(chat.page, [png('screenshot.png', 20, 10)]);
      await chat.composer.evaluate((box, clipboardData) => {
        box.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }));
      }, pasted);
      await waitForUploads(chat, 1);
      // A file is something to say: Send is on with the message box empty.
      expect(await chat.composer.inputValue()).toBe('');
      expect(await send.isEnabled()).toBe(true);
      expect(await axeViolations(chat.page)).toEqual([]);

      await chat.composer.press('Enter');
      const answer = await chat.waitForAnswer('completed');
      expect(answer.text).toContain('You attached the image "screenshot.png" (image/png, 20×10 pixels');
      const prompt = chat.page.locator('article.message-user').last();
      await waitForImages(chat.page, '.message-attachments img', 1);
      expect(await prompt.locator('.user-text').count()).toBe(0);
      expect(await prompt.locator('.message-body').count()).toBe(0);
      await chat.page
        .getByRole('navigation', { name: 'Threads' })
        .getByRole('button', { name: /^screenshot\.png/ })
        .waitFor();
      // The conversation tree names the prompt by its file.
      const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });
      const pill = tree.locator(`[data-node-id="${await prompt.getAttribute('data-node-id')}"]`);
      expect(await pill.getAttribute('aria-label')).toMatch(/^You, turn 1.*: screenshot\.png$/);
      expect(await pill.locator('.tree-label').textContent()).toBe('screenshot.png');
      expect(await axeViolations(chat.page)).toEqual([]);

      // A prompt of words and a file, edited to no words: the new branch carries the file alone, and is answered.
      const withWords = await dataTransferOf(chat.page, [png('second.png', 6, 6)]);
      await chat.composer.evaluate((box, clipboardData) => {
        box.dispatchEvent(new ClipboardEvent('paste', { clipboardData, bubbles: true, cancelable: true }));
      }, withWords);
      await waitForUploads(chat, 1);
      await chat.send('And this one?');
      const second = await chat.waitForAnswer('completed', { otherThan: answer.id });
      const secondPrompt = (await chat.messages()).at(-2)!;
      expect(secondPrompt.text).toBe('And this one?');
      await chat.action(secondPrompt.id, 'Edit').click();
      const editBox = chat.message(secondPrompt.id).getByRole('textbox', { name: 'Edit message' });
      await editBox.fill('');
      await editBox.press('Enter');
      const edited = await chat.waitForAnswer('completed', { otherThan: second.id });
      expect(edited.text).toContain('You attached the image "second.png" (image/png, 6×6 pixels');
      const editedPrompt = chat.page.locator('article.message-user').last();
      expect(await editedPrompt.locator('.user-text').count()).toBe(0);
      expect(await editedPrompt.locator('.message-attachments img').count()).toBe(1);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'has no accessibility violation with files in the tray, in a message and in the lightbox',
    async () => {
      const harness = await WebHarness.start();
      const context = await harness.newContext(undefined, { bypassCSP: true });
      const chat = await harness.openChat(context);
      const [chooser] = await Promise.all([
        chat.page.waitForEvent('filechooser'),
        chat.page.getByRole('button', { name: 'Attach', exact: true }).click(),
      ]);
      await chooser.setFiles([png('chart.png', 32, 32), pdf('report.pdf', 'Quarterly figures')]);
      await waitForUploads(chat, 2);
      await chat.composer.fill('Look');
      expect(await axeViolations(chat.page)).toEqual([]);

      await chat.composer.press('Enter');
      await chat.waitForAnswer('completed');
      await waitForImages(chat.page, '.message-attachments img', 1);
      expect(await axeViolations(chat.page)).toEqual([]);

      await chat.page.getByRole('button', { name: 'View chart.png' }).click();
      await chat.page.getByRole('dialog', { name: 'chart.png' }).waitFor();
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'exports a thread with its image in the CPP JSON and imports it back: the copy shows the image, uploaded anew',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { page } = chat;
      const threads = page.getByRole('navigation', { name: 'Threads' });
      const image = png('figure.png', 12, 8);
      const [chooser] = await Promise.all([
        page.waitForEvent('filechooser'),
        page.getByRole('button', { name: 'Attach', exact: true }).click(),
      ]);
      await chooser.setFiles([image]);
      await waitForUploads(chat, 1);
      await chat.send('Keep this figure');
      await chat.waitForAnswer('completed');
      await threads.getByRole('button', { name: /^Keep this figure/ }).waitFor();
      const sent = await page.locator('.message-attachments img').getAttribute('src');

      await chat.openThreadMenu();
      await threads.getByRole('button', { name: 'Export thread' }).click();
      const [download] = await Promise.all([
        page.waitForEvent('download'),
        threads
          .getByRole('group', { name: 'Export thread as' })
          .getByRole('button', { name: /CPP JSON/ })
          .click(),
      ]);
      const exported = JSON.parse(await readFile((await download.path())!, 'utf8'));
      expect(Object.values(exported.files as Record<string, string>)).toEqual([image.buffer.toString('base64')]);

      await threads
        .getByLabel('File to import: a CPP JSON export or a ChatGPT conversations.json')
        .setInputFiles(await download.path());
      await page.getByRole('status').getByText('Imported “Keep this figure (copy)”: it is open now.').waitFor();
      await page.locator('article.message-user .message-attachments').waitFor();
      await waitForImages(page, '.message-attachments img', 1);
      const shown = await page.locator('.message-attachments img').getAttribute('src');
      expect(new URL(shown!).pathname).not.toBe(new URL(sent!).pathname);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
