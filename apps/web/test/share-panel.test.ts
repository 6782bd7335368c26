import { describe, expect, it } from 'vitest';
import { axeViolations } from './support/accessibility.js';
import { DESKTOP, PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('the Share panel', () => {
  it(
    'gives an invite link a second identity opens, and the two follow one conversation: a pivot by the member halts the answer the owner watches',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const owner = await harness.openChat();
      await owner.send('Shared live');
      const answer = await owner.waitForAnswer('streaming', { minLength: 20 });

      await owner.page.getByRole('button', { name: 'Share', exact: true }).click();
      await owner.page.getByRole('button', { name: 'Create an invite link' }).click();
      const linkBox = owner.page.getByRole('textbox', { name: /^Invite link/ });
      await linkBox.waitFor();
      const link = await linkBox.inputValue();
      expect(link).toMatch(/#\/join\/cppinv_[A-Za-z0-9_-]{43}$/);
      await screenshot(owner.page, 'share-panel-link');

      const member = await harness.openChat(undefined, link);
      const watched = await member.waitForAnswer('streaming', { minLength: answer.length + 10 });
      expect(watched.id).toBe(answer.id);

      // Each sees the other there (PROTOCOL.md §29.9), and the owner sees the member type.
      const joined = member.frames.lastReceived('CPP_MEMBERS')!.payload as {
        ownerDid: string;
        members: { did: string }[];
      };
      const [ownerDid, memberDid] = [joined.ownerDid, joined.members[0]!.did];
      const here = (chat: typeof owner, did: string) =>
        chat.page.getByRole('list', { name: 'Also here' }).locator(`li[title="${did}"]`);
      await Promise.all([here(owner, memberDid).waitFor(), here(member, ownerDid).waitFor()]);
      await member.composer.fill('Wait: in Rust instead');
      await owner.page.locator(`li.typing[title="${memberDid}"]`).getByText('typing…').waitFor();
      await screenshot(owner.page, 'share-panel-member-typing');

      await member.send('Wait: in Rust instead');
      const cut = (chat: typeof owner) =>
        chat.page.locator(`article[data-node-id="${answer.id}"][data-status="interrupted"]`);
      await Promise.all([cut(owner).waitFor(), cut(member).waitFor()]);
      const halted = member.frames.lastReceived('CPP_STREAM_HALTED')!.payload.finalContentLength;
      expect(await cut(owner).getAttribute('data-length')).toBe(String(halted));
      expect(await cut(member).getAttribute('data-length')).toBe(String(halted));
      await owner.page.getByText('Wait: in Rust instead').first().waitFor();
      await owner.page
        .getByRole('article', { name: /^Member …/ })
        .first()
        .waitFor();
      await screenshot(owner.page, 'share-panel-member-pivoted');
      expect([...owner.problems, ...member.problems]).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'makes a read-only link another browser reads with no identity and no socket, until the owner revokes it',
    async () => {
      const harness = await WebHarness.start();
      const owner = await harness.openChat();
      await owner.send('Worth sharing <b>as text</b>');
      await owner.waitForAnswer('completed');

      await owner.page.getByRole('button', { name: 'Share', exact: true }).click();
      await owner.page.getByRole('button', { name: 'Create a read-only link' }).click();
      const linkBox = owner.page.getByRole('textbox', { name: /^Read-only link/ });
      await linkBox.waitFor();
      const url = await linkBox.inputValue();
      expect(url).toMatch(/\/share\/cppshr_[A-Za-z0-9_-]{43}$/);
      await owner.page.getByRole('list', { name: 'Read-only links' }).getByRole('listitem').waitFor();

      const reader = await (await harness.newContext()).newPage();
      const sockets: string[] = [];
      const violations: string[] = [];
      reader.on('websocket', (socket) => sockets.push(socket.url()));
      reader.on('console', (message) => {
        if (message.type() === 'error') violations.push(message.text());
      });
      const shown = await reader.goto(url);
      expect(shown?.status()).toBe(200);
      await reader.getByRole('heading', { level: 1 }).waitFor();
      expect(await reader.locator('article.message.user .text').textContent()).toBe('Worth sharing <b>as text</b>');
      expect(await reader.locator('article.message').count()).toBe(2);
      // The answer's Markdown rendered by the server, as the app renders it (the demo answer has a table and code).
      await reader.locator('article.message.assistant .markdown table th').first().waitFor();
      await reader.locator('article.message.assistant .markdown pre > code').waitFor();
      // Its stylesheet applied under the page's policy (an inline style would have been refused, and logged).
      expect(await reader.locator('main').evaluate((main) => getComputedStyle(main).maxWidth)).not.toBe('none');
      await screenshot(reader, 'share-link-page');
      expect(sockets).toEqual([]);
      expect(violations).toEqual([]);
      for (const colorScheme of ['light', 'dark'] as const) {
        const audited = await (await harness.newContext(DESKTOP, { colorScheme, bypassCSP: true })).newPage();
        await audited.goto(url);
        expect(await axeViolations(audited)).toEqual([]);
        if (colorScheme === 'dark') await screenshot(audited, 'share-link-page-dark');
      }

      await owner.page.getByRole('button', { name: /^Revoke the read-only link/ }).click();
      await owner.page
        .getByRole('list', { name: 'Read-only links' })
        .getByRole('listitem')
        .waitFor({ state: 'detached' });
      expect((await reader.reload())?.status()).toBe(404);
      expect(owner.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it.each([
    { name: 'desktop', viewport: DESKTOP, colorScheme: 'light' },
    { name: 'desktop', viewport: DESKTOP, colorScheme: 'dark' },
    { name: 'phone', viewport: PHONE, colorScheme: 'light' },
  ] as const)(
    'is used from the keyboard alone, and axe finds nothing in it: $name, $colorScheme',
    async ({ name, viewport, colorScheme }) => {
      const harness = await WebHarness.start();
      const owner = await harness.openChat(await harness.newContext(viewport, { colorScheme, bypassCSP: true }));
      await owner.send('To be shared');
      await owner.waitForAnswer('completed');
      const { page } = owner;
      const share = page.getByRole('button', { name: 'Share', exact: true });
      await share.focus();
      await page.keyboard.press('Enter');
      const panel = page.getByRole('region', { name: 'Share this conversation' });
      // The focus goes into the panel, on its first control, however far the panel is in the tab order.
      await expect
        .poll(() => panel.getByRole('combobox', { name: 'Role' }).evaluate((el) => el === document.activeElement))
        .toBe(true);
      expect(await share.getAttribute('aria-controls')).toBe('share-panel');

      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      await panel.getByRole('textbox', { name: /^Invite link/ }).waitFor();
      await panel.getByRole('textbox', { name: 'DID to share with' }).focus();
      await page.keyboard.type('did:key:z6MkhaXgBZDvotDkL5257faiztiGiC2QtKLGpbnnEGta2doK');
      await page.keyboard.press('Enter');
      await panel.getByRole('list', { name: 'Members' }).getByRole('listitem').waitFor();
      await panel.getByRole('button', { name: 'Create a read-only link' }).focus();
      await page.keyboard.press('Enter');
      await panel.getByRole('list', { name: 'Read-only links' }).getByRole('listitem').waitFor();
      expect(await axeViolations(page)).toEqual([]);
      await panel.scrollIntoViewIfNeeded();
      await screenshot(page, `share-panel-${name}-${colorScheme}`);

      // Esc closes it, and the focus is back on the button that opened it.
      await panel.getByRole('button', { name: 'Create a read-only link' }).focus();
      await page.keyboard.press('Escape');
      await panel.waitFor({ state: 'detached' });
      expect(await share.evaluate((el) => el === document.activeElement)).toBe(true);
      expect(await share.getAttribute('aria-expanded')).toBe('false');
      expect(owner.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
