import { DemoProvider } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { axeViolations } from './support/accessibility.js';
import { DESKTOP, PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 120_000;

/** Three models told apart by their names in the model list; `Slow` streams for as long as any test runs. */
const MODELS = () => [
  { id: 'quick', label: 'Quick', provider: new DemoProvider({ delayMs: 2, words: 20 }) },
  { id: 'steady', label: 'Steady', provider: new DemoProvider({ delayMs: 2, words: 30 }) },
  { id: 'slow', label: 'Slow', provider: new DemoProvider({ delayMs: 40, words: 3_000 }) },
];

describe('several models answering one prompt, side by side, in the browser', () => {
  it(
    'asks the models picked in the composer, shows their answers side by side on a wide screen and stacked on a phone, and goes on from the one picked',
    async () => {
      const harness = await WebHarness.start({ models: MODELS() });
      const chat = await harness.openChat(await harness.newContext(DESKTOP, { bypassCSP: true }));
      await chat.page.getByRole('combobox', { name: 'Model' }).waitFor();
      await chat.page.locator('.model-compare summary').click();
      const also = chat.page.getByRole('group', { name: 'Also answered by' });
      expect(await also.getByRole('checkbox').count()).toBe(2);
      await also.getByRole('checkbox', { name: 'Steady' }).check();
      expect(await axeViolations(chat.page)).toEqual([]);

      await chat.send('Compare yourselves');
      const answers = chat.page.getByRole('list', { name: '2 answers side by side' });
      await answers.waitFor();
      expect(chat.frames.lastSent('CPP_PROMPT')!.payload).toMatchObject({ models: ['quick', 'steady'] });
      const picked = answers.locator('article.message');
      const beside = answers.getByRole('region', { name: /^Answer by steady/ });
      await chat.page.waitForFunction(() =>
        [...document.querySelectorAll<HTMLElement>('.side-by-side [data-status]')].every(
          (answer) => answer.dataset.status === 'completed',
        ),
      );
      expect(await picked.locator('.message-model').textContent()).toBe(' · quick');
      // Side by side on a wide screen: the two columns share a row.
      const [left, right] = [await picked.boundingBox(), await beside.boundingBox()];
      expect(right!.x).toBeGreaterThan(left!.x + left!.width - 1);
      expect(Math.abs(right!.y - left!.y)).toBeLessThan(2);
      await screenshot(chat.page, 'side-by-side-desktop');
      expect(await axeViolations(chat.page)).toEqual([]);

      // The person goes on from the second: an anchor, after which the branch runs through it.
      const steadyId = await beside.getAttribute('data-node-id');
      await beside.getByRole('button', { name: 'Continue from this answer' }).click();
      await chat.page.waitForFunction(
        (id) => document.querySelector(`.side-by-side article.message[data-node-id="${id}"]`) !== null,
        steadyId,
      );
      expect(chat.frames.lastSent('CPP_ANCHOR_HEAD')!.payload.targetNodeId).toBe(steadyId);
      await chat.send('Go on');
      await chat.waitForAnswer('completed', { otherThan: steadyId! });
      const next = chat.frames.lastSent('CPP_PROMPT')!.payload;
      // Both models answer the next message too: the choice stays until the person changes it.
      expect(next.models).toEqual(['quick', 'steady']);
      expect(next.parentNodeId).toBeUndefined();

      // Stacked on a phone.
      await chat.page.setViewportSize(PHONE);
      const stacked = chat.page.getByRole('list', { name: '2 answers side by side' }).first();
      const items = stacked.locator(':scope > li');
      await chat.page.waitForFunction(() => {
        const [top, bottom] = document.querySelectorAll('.side-by-side > li');
        return top && bottom && bottom.getBoundingClientRect().top >= top.getBoundingClientRect().bottom - 1;
      });
      const [top, bottom] = [await items.nth(0).boundingBox(), await items.nth(1).boundingBox()];
      expect(Math.abs(bottom!.x - top!.x)).toBeLessThan(2);
      await screenshot(chat.page, 'side-by-side-phone');
      expect(await axeViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'keeps the actions of three answers side by side on one line each, their icons named',
    async () => {
      const quick = (id: string) => ({ id, label: id, provider: new DemoProvider({ delayMs: 2, words: 20 }) });
      const harness = await WebHarness.start({ models: [quick('one'), quick('two'), quick('three')] });
      const chat = await harness.openChat(await harness.newContext(DESKTOP));
      await chat.page.locator('.model-compare summary').click();
      await chat.page.getByRole('checkbox', { name: 'two' }).check();
      await chat.page.getByRole('checkbox', { name: 'three' }).check();
      await chat.send('Three at once');
      const answers = chat.page.getByRole('list', { name: '3 answers side by side' });
      await answers.waitFor();
      await chat.page.waitForFunction(
        () =>
          [...document.querySelectorAll<HTMLElement>('.side-by-side [data-status]')].filter(
            (answer) => answer.dataset.status === 'completed',
          ).length === 3,
      );
      const picked = answers.locator('article.message');
      await picked.hover();
      const actions = picked.locator('.message-actions .action');
      expect(await actions.count()).toBeGreaterThan(2);
      // One line each: no button taller than a line of its icon, none wider than its column.
      const boxes = await actions.evaluateAll((buttons) => buttons.map((button) => button.getBoundingClientRect()));
      const column = (await picked.boundingBox())!;
      for (const box of boxes) {
        expect(box.height).toBeLessThanOrEqual(40);
        expect(box.right).toBeLessThanOrEqual(column.x + column.width + 1);
      }
      await picked.getByRole('button', { name: 'Regenerate' }).waitFor();
      await screenshot(chat.page, 'side-by-side-three');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'stops every answer with Stop, and a pivot sent while they stream halts them all and branches under the one on the branch',
    async () => {
      const harness = await WebHarness.start({ models: MODELS() });
      const chat = await harness.openChat();
      await chat.page.getByRole('combobox', { name: 'Model' }).selectOption({ label: 'Slow' });
      await chat.page.locator('.model-compare summary').click();
      await chat.page.getByRole('checkbox', { name: 'Quick' }).check();

      await chat.send('Take your time');
      const answers = chat.page.getByRole('list', { name: '2 answers side by side' });
      await answers.waitFor();
      await chat.waitForAnswer('streaming', { minLength: 40 });
      await chat.page.getByRole('button', { name: '■ Stop' }).click();
      await chat.waitForAnswer('interrupted');
      expect(chat.frames.lastSent('CPP_STREAM_STOP')).toBeDefined();

      await chat.send('Once more, both');
      const first = await chat.waitForAnswer('streaming', { minLength: 40 });
      await chat.send('Now something else');
      await chat.frames.receivedFrame(
        (frame) =>
          frame.type === 'CPP_STREAM_HALTED' &&
          frame.payload.reason === 'pivot' &&
          frame.payload.interruptedNodeId === first.id,
      );
      const pivot = chat.frames.lastSent('CPP_PIVOT_INIT')!.payload;
      expect(pivot).toMatchObject({ interruptedNodeId: first.id, models: ['slow', 'quick'] });
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
