import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

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
      expect(await pill(root!.id).locator('.tree-label').textContent()).toBe('Tell me about tre…');
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
});
