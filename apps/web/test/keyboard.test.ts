import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('keyboard first, in the browser', () => {
  it(
    'focuses the message box on open, after sending, and with "/" from anywhere; example prompts start a chat',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const composerFocused = () => chat.composer.evaluate((box) => box === document.activeElement);
      expect(await composerFocused()).toBe(true);

      // An example prompt of the empty state is sent as if typed.
      await chat.page.getByRole('list', { name: 'Example prompts' }).getByRole('button').first().click();
      const answer = await chat.waitForAnswer('completed');
      expect((await chat.messages())[0]!.text).toBe('Explain how a conversation can branch like a tree');
      expect(await composerFocused()).toBe(true);

      // Clicking Send leaves the focus in the box, ready for the next message.
      await chat.composer.fill('and then?');
      await chat.page.getByRole('button', { name: 'Send', exact: true }).click();
      await chat.waitForAnswer('completed', { otherThan: answer.id });
      expect(await composerFocused()).toBe(true);

      const search = chat.page.getByRole('searchbox', { name: 'Search threads' });
      await search.focus();
      await chat.page.keyboard.type('/');
      // Typed into the search box, "/" is text: it does not jump.
      expect(await search.inputValue()).toBe('/');
      await search.fill('');
      await chat.message(answer.id).focus();
      await chat.page.keyboard.press('/');
      expect(await composerFocused()).toBe(true);
      expect(await chat.composer.inputValue()).toBe('');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'reaches every control with Tab, in a sensible order, each with a visible focus ring',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await chat.twoTurns();
      await chat.composer.focus();
      const stops: Array<{ name: string; outline: string }> = [];
      for (let index = 0; index < 30; index += 1) {
        await chat.page.keyboard.press('Tab');
        const stop = await chat.page.evaluate(() => {
          const element = document.activeElement as HTMLElement;
          const style = getComputedStyle(element);
          const label = (element as HTMLTextAreaElement).labels?.[0]?.textContent?.trim();
          const name =
            element.getAttribute('aria-label')?.split(':')[0] ??
            label ??
            element.textContent?.trim().slice(0, 24) ??
            element.tagName;
          return {
            name: `${element.tagName.toLowerCase()} ${name}`,
            outline: style.outlineStyle === 'none' && style.boxShadow === 'none' ? 'none' : 'visible',
          };
        });
        if (stops.some((seen) => seen.name === stop.name)) break;
        // Past the last control the focus leaves the page for the browser's own controls, then comes back.
        if (!stop.name.startsWith('body')) stops.push(stop);
      }
      const names = stops.map((stop) => stop.name);
      // From the message box on: Attach, the tree's zoom and the tree, then the page from the top (the header's Share, the
      // threads). The conversation is one stop (the newest message) and so is the tree (the head), each walked with
      // the arrow keys.
      expect(names).toEqual([
        'button Attach',
        'button Zoom out',
        'button Zoom in',
        'button Assistant, turn 4, head',
        'button Share',
        'button + New thread',
        'button Import threads from a file',
        'input Search threads',
        'button one, now · 4 messages',
        'button Thread actions',
        'article Assistant',
        'textarea Message',
      ]);
      expect(stops.filter((stop) => stop.outline === 'none')).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'counts characters near the limit and says in words why a message is too long',
    async () => {
      const harness = await WebHarness.start({ limits: { maxPromptLength: 50 } });
      const chat = await harness.openChat();
      const hint = chat.page.locator('.composer-hint');
      const send = chat.page.getByRole('button', { name: 'Send', exact: true });

      await chat.composer.fill('x'.repeat(79_999));
      expect(await hint.locator('.length-counter').count()).toBe(0);
      await chat.composer.fill('x'.repeat(85_000));
      expect(await hint.locator('.length-counter').textContent()).toBe('85,000 / 100,000');
      expect(await send.isEnabled()).toBe(true);
      await chat.composer.fill('x'.repeat(204_800));
      expect(await hint.locator('.composer-hint-text').textContent()).toBe(
        'This message is 204,800 characters; the limit is 100,000. Shorten it to send.',
      );
      expect(await chat.composer.getAttribute('aria-invalid')).toBe('true');
      expect(await send.isEnabled()).toBe(false);
      await screenshot(chat.page, 'composer-too-long');

      // This server allows 50: its refusal is shown in the same words, with the protocol's code on hover.
      await chat.send('y'.repeat(60));
      const error = chat.page.getByRole('alert').locator('.error');
      await error.waitFor();
      expect(await error.locator('.error-message').textContent()).toBe(
        'This message is 60 characters; the limit is 50.',
      );
      expect(await error.getAttribute('title')).toBe('Error code RATE_LIMITED');
      // The text comes back to the box, to shorten.
      expect(await chat.composer.inputValue()).toBe('y'.repeat(60));
      await screenshot(chat.page, 'composer-refused');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
