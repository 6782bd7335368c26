import { DemoToolsProvider } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('tool calls in the browser', () => {
  it(
    'shows each call of an answer with its state, answers the client tool time_zone, and asks for approval with buttons',
    async () => {
      const harness = await WebHarness.start({ models: [{ provider: new DemoToolsProvider({ delayMs: 2 }) }] });
      const chat = await harness.openChat();
      const timeZone = await chat.page.evaluate(() => Intl.DateTimeFormat().resolvedOptions().timeZone);

      // The page runs the client tool time_zone: the browser's own time zone goes back to the model.
      await chat.send('What is my time zone?');
      const first = await chat.waitForAnswer('completed');
      const zoneCall = chat.message(first.id).locator('.tool-call');
      expect(await zoneCall.locator('.tool-name').textContent()).toBe('time_zone');
      expect(await zoneCall.locator('.tool-state').textContent()).toBe('done');
      expect(await chat.message(first.id).locator('.message-body').textContent()).toContain(
        `Your time zone is ${timeZone}.`,
      );

      // A call that needs approval shows Approve and Deny; the denial goes to the model.
      await chat.send('Keep a note: buy milk');
      const deny = chat.page.getByRole('button', { name: 'Deny', exact: true });
      await deny.waitFor();
      await screenshot(chat.page, 'tools-approval');
      await deny.click();
      const second = await chat.waitForAnswer('completed', { otherThan: first.id });
      const noteCall = chat.message(second.id).locator('.tool-call');
      expect(await noteCall.locator('.tool-state').textContent()).toBe('denied');
      expect(await chat.message(second.id).locator('.message-body').textContent()).toContain(
        'You did not approve it, so I kept nothing.',
      );
      expect(await chat.message(second.id).getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
      // The call's input is shown as text, folded until opened.
      await noteCall.locator('summary').click();
      expect(await noteCall.locator('.tool-input').textContent()).toBe('{"text":"Keep a note: buy milk"}');
    },
    BROWSER_TEST_MS,
  );
});
