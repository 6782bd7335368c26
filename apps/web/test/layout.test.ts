import { DemoProvider } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import type { ChatPage } from './support/chat-page.js';
import { openLongThread } from './support/long-thread.js';
import { DESKTOP, PHONE, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

/** How far the document itself can scroll: 0 when only the panes inside it scroll. */
function documentOverflow(chat: ChatPage): Promise<number> {
  return chat.page.evaluate(() => document.documentElement.scrollHeight - document.documentElement.clientHeight);
}

/** Wheels over the element at the middle of `selector`'s box, and tells whether the window scrolled. */
async function wheelMovesWindow(chat: ChatPage, selector: string): Promise<boolean> {
  const box = await chat.page.locator(selector).first().boundingBox();
  if (!box) throw new Error(`${selector} is not on screen`);
  await chat.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  for (let turn = 0; turn < 5; turn += 1) await chat.page.mouse.wheel(0, 3000);
  // A wheel's scroll is applied by the next frame: read it after one has been drawn.
  return chat.page.evaluate(
    () => new Promise<boolean>((resolve) => requestAnimationFrame(() => resolve(window.scrollY !== 0))),
  );
}

describe('layout in the browser', () => {
  it.each([
    { name: 'desktop', viewport: DESKTOP },
    { name: 'phone', viewport: PHONE },
  ])(
    'keeps the shell fixed with a 48-message thread on the $name: only the panes scroll',
    async ({ name, viewport }) => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat(await harness.newContext(viewport));
      if (name === 'phone') await chat.page.getByRole('button', { name: '☰ Threads', exact: true }).click();
      await openLongThread(chat);
      expect(await documentOverflow(chat)).toBe(0);
      const list = chat.messageList;
      expect(await list.evaluate((element) => element.scrollHeight > element.clientHeight)).toBe(true);

      // Past the end of the chat, over the thread list, over the tree: the window never moves, the header stays.
      expect(await wheelMovesWindow(chat, '[role="log"]')).toBe(false);
      expect(
        await list.evaluate((element) => element.scrollTop + element.clientHeight >= element.scrollHeight - 1),
      ).toBe(true);
      if (name === 'desktop') {
        expect(await wheelMovesWindow(chat, '.threads-panel')).toBe(false);
        expect(await wheelMovesWindow(chat, '.tree-panel')).toBe(false);
      } else {
        await chat.page.getByRole('button', { name: '☰ Threads', exact: true }).click();
        expect(await wheelMovesWindow(chat, '.threads-panel')).toBe(false);
        await chat.page.keyboard.press('Escape');
        await chat.page.getByRole('button', { name: 'Tree' }).click();
        expect(await wheelMovesWindow(chat, '.tree-panel')).toBe(false);
      }
      expect(await documentOverflow(chat)).toBe(0);
      expect((await chat.page.locator('.top-bar').boundingBox())?.y).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'keeps the message box wide on a phone while an answer streams, with the model picker, Stop and Pivot',
    async () => {
      const models = [
        { provider: new DemoProvider({ delayMs: 40, words: 3000 }), label: 'Demo' },
        { id: 'demo-quick', provider: new DemoProvider({ delayMs: 2 }), label: 'Demo, quick' },
      ];
      const harness = await WebHarness.start({ models });
      const chat = await harness.openChat(await harness.newContext(PHONE));
      await chat.page.getByRole('combobox', { name: 'Model' }).waitFor();
      await chat.send('Tell me about trees');
      await chat.waitForAnswer('streaming', { minLength: 20 });
      await chat.composer.fill('Actually, tell me about rivers');
      await chat.page.getByRole('button', { name: 'Pivot' }).waitFor();
      await chat.page.getByRole('button', { name: '■ Stop' }).waitFor();
      expect((await chat.composer.boundingBox())!.width).toBeGreaterThanOrEqual(200);
      expect(await documentOverflow(chat)).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it.each([
    { name: 'desktop', viewport: DESKTOP, least: 24 },
    { name: 'phone', viewport: PHONE, least: 44 },
  ])(
    'gives the branch switcher and the message actions targets of at least $least px on the $name, and marks the head unlike the focus',
    async ({ viewport, least }) => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat(await harness.newContext(viewport));
      const { first } = await chat.twoTurns();
      await chat.action(first.id, 'Regenerate').click();
      const switcher = chat.page.getByRole('group', { name: 'Branch 2 of 2' });
      await switcher.waitFor();
      await chat.waitForAnswer('completed', { otherThan: first.id });
      const boxes = [
        await switcher.getByRole('button', { name: 'Previous branch' }).boundingBox(),
        await switcher.getByRole('button', { name: 'Next branch' }).boundingBox(),
        ...(await Promise.all(
          (
            await chat.messageList.getByRole('toolbar').last().getByRole('button').all()
          ).map((button) => button.boundingBox()),
        )),
      ];
      for (const box of boxes) {
        expect(box!.width).toBeGreaterThanOrEqual(least);
        expect(box!.height).toBeGreaterThanOrEqual(least);
      }
      // The switcher's text is the page's text colour, not a faint grey.
      const colours = await switcher.evaluate((element) => [
        getComputedStyle(element).color,
        getComputedStyle(document.body).color,
      ]);
      expect(colours[0]).toBe(colours[1]);

      // The head is marked, but not with a ring or outline as the keyboard focus is.
      await chat.composer.focus();
      const head = chat.messageList.locator('article.is-head');
      expect(await head.count()).toBe(1);
      const style = await head.evaluate((element) => {
        const computed = getComputedStyle(element);
        return { shadow: computed.boxShadow, outline: computed.outlineStyle, bar: computed.borderLeftWidth };
      });
      expect(style).toEqual({ shadow: 'none', outline: 'none', bar: '4px' });
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
