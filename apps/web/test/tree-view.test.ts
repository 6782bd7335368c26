import { describe, expect, it } from 'vitest';
import type { ChatPage } from './support/chat-page.js';
import { openLongThread } from './support/long-thread.js';
import { DESKTOP, PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('the tree view in the browser', () => {
  it(
    'labels nodes with their first words, marks a cut, a pivot and a streaming answer without colour alone, and zooms',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat();
      const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });

      await chat.send('Tell me about trees');
      const first = await chat.waitForAnswer('streaming', { minLength: 60 });
      // A pivot: the answer is cut where it was read, and the new prompt forks from it.
      await chat.send('Rivers instead');
      // The new branch's answer, not the first one still streaming before the pivot reaches the server.
      const branched = await chat.waitForAnswer('streaming', { minLength: 40, otherThan: first.id });
      const [root, cut, pivot] = await chat.messages();

      const pill = (id: string) => tree.locator(`.tree-node[data-node-id="${id}"]`);
      expect(await pill(root!.id).locator('.tree-label').textContent()).toBe('Tell me about trees');
      expect(await pill(pivot!.id).locator('.tree-label').textContent()).toBe('Rivers instead');
      expect(await pill(cut!.id).locator('.tree-glyph').textContent()).toBe('✂');
      expect(await pill(cut!.id).getAttribute('aria-label')).toMatch(/^Assistant, turn 2, interrupted: \(demo model/);
      expect(await pill(cut!.id).evaluate((element) => getComputedStyle(element).borderStyle)).toBe('dashed');
      expect(await pill(branched.id).locator('.tree-glyph').textContent()).toBe('●');
      expect(await pill(branched.id).getAttribute('aria-label')).toMatch(/^Assistant, turn 4, head, streaming: /);
      await chat.page.getByText('Choose a message to show its branch').waitFor();
      await screenshot(chat.page, 'tree-pivot');

      // Zoom changes the drawn size; the arrows walk from the head up the branch.
      const size = () => tree.locator('.minimap-sizer').evaluate((element) => element.getBoundingClientRect().width);
      const before = await size();
      await tree.getByRole('button', { name: 'Zoom out' }).click();
      expect(await size()).toBeLessThan(before);
      await tree.getByRole('button', { name: 'Zoom in' }).click();
      await tree.getByRole('button', { name: 'Zoom in' }).click();
      expect(await size()).toBeGreaterThan(before);
      await screenshot(chat.page, 'tree-zoomed');

      await pill(branched.id).focus();
      await chat.page.keyboard.press('ArrowUp');
      await chat.page.keyboard.press('ArrowUp');
      expect(await chat.page.evaluate(() => (document.activeElement as HTMLElement).dataset.nodeId)).toBe(cut!.id);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it.each([
    { name: 'desktop', viewport: DESKTOP },
    { name: 'phone', viewport: PHONE },
  ])(
    'shows whole labels, keeps its scroll area inside the panel, and scrolls to the head of a long thread: $name',
    async ({ name, viewport }) => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat(await harness.newContext(viewport));
      if (name === 'phone') await chat.page.getByRole('button', { name: '☰ Threads', exact: true }).click();
      await openLongThread(chat);
      if (name === 'phone') await chat.page.getByRole('button', { name: 'Tree' }).click();
      const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });
      await tree.locator('.tree-node').first().waitFor();

      // A label has two lines: "Question number 1, about topic 1" is not cut.
      const label = tree.locator('.tree-node').first().locator('.tree-label');
      expect(await label.textContent()).toBe('Question number 1, about topic 1');
      expect(await label.evaluate((element) => element.scrollHeight <= element.clientHeight + 1)).toBe(true);

      // The scroll area fits in the panel, so both its scrollbars are on screen; the head is in view.
      const [panel, area, head] = await Promise.all([
        chat.page.locator('#tree-panel').boundingBox(),
        tree.locator('.minimap-scroll').boundingBox(),
        tree.locator('.tree-node.is-head').boundingBox(),
      ]);
      expect(area!.y + area!.height).toBeLessThanOrEqual(panel!.y + panel!.height + 1);
      expect(area!.x + area!.width).toBeLessThanOrEqual(panel!.x + panel!.width + 1);
      expect(await inside(chat, head!, area!)).toBe(true);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
  it(
    'lets the person look around the tree while an answer streams, without pulling them back to the head',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat();
      await openLongThread(chat, 24);
      await chat.send('Tell me about trees');
      await chat.waitForAnswer('streaming', { minLength: 20 });
      const area = chat.page.getByRole('navigation', { name: 'Conversation tree' }).locator('.minimap-scroll');
      expect(await area.evaluate((element) => element.scrollTop)).toBeGreaterThan(0);
      await area.evaluate((element) => {
        element.scrollTop = 0;
      });
      const { length } = await chat.lastMessage();
      await chat.waitForAnswer('streaming', { minLength: length + 60 });
      expect(await area.evaluate((element) => element.scrollTop)).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});

type Box = { x: number; y: number; width: number; height: number };

/** Whether `box` lies within `area`, and the window shows both. */
async function inside(chat: ChatPage, box: Box, area: Box): Promise<boolean> {
  const view = chat.page.viewportSize()!;
  return (
    box.x >= area.x - 1 &&
    box.y >= area.y - 1 &&
    box.x + box.width <= area.x + area.width + 1 &&
    box.y + box.height <= Math.min(area.y + area.height, view.height) + 1
  );
}
