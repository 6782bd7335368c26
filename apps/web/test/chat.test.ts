import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('chat in the browser', () => {
  it(
    'sends a prompt, streams the answer into the chat and lists the thread',
    async () => {
      const harness = await WebHarness.start({ slow: true });
      const chat = await harness.openChat();
      await screenshot(chat.page, 'chat-empty');

      await chat.send('How do branching conversations work?');
      const streaming = await chat.waitForAnswer('streaming', { minLength: 80 });
      expect(streaming.text.startsWith('(demo model, turn 1) You said: "How do branching conversations work?"')).toBe(
        true,
      );
      const bubble = chat.message(streaming.id);
      expect(await bubble.getAttribute('aria-busy')).toBe('true');
      expect(await bubble.locator('.message-body').getAttribute('aria-live')).toBe('polite');
      await expect(chat.page.getByRole('button', { name: 'Pivot' })).toBeDefined();
      await screenshot(chat.page, 'chat-streaming');

      // It keeps streaming: later the same bubble holds more of the same text.
      const later = await chat.waitForAnswer('streaming', { minLength: streaming.length + 20 });
      expect(later.id).toBe(streaming.id);
      expect(later.text.startsWith(streaming.text.slice(0, -1))).toBe(true);

      const thread = chat.page
        .getByRole('navigation', { name: 'Threads' })
        .getByRole('button', { name: /How do branching conversations work\?/ });
      await thread.waitFor();
      expect(await thread.getAttribute('aria-current')).toBe('page');
      expect(await thread.textContent()).toContain('2 messages');
      expect(chat.threadId()).toMatch(/^thread_/);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'proves one did:key identity per browser, kept across visits, on every session',
    async () => {
      const harness = await WebHarness.start();
      const context = await harness.newContext();
      const chat = await harness.openChat(context);
      // The DID each page proved (its key is in IndexedDB, where no script can read it: the client's tests check that).
      const kept = async (page: typeof chat) => ({
        did: page.frames.lastReceived('CPP_AUTH_ACCEPTED')!.payload.did as string,
      });
      const { did } = await kept(chat);
      expect(did).toMatch(/^did:key:z6Mk[1-9A-HJ-NP-Za-km-z]{44}$/);
      expect(chat.frames.socketUrls.map((url) => new URL(url).searchParams.get('did'))).toEqual([did]);
      expect(chat.frames.sent[0]).toMatchObject({ type: 'CPP_AUTH_PROOF', payload: { did } });
      expect(chat.frames.lastReceived('CPP_AUTH_ACCEPTED')?.payload).toEqual({ did });
      const second = await harness.openChat(context);
      expect((await kept(second)).did).toBe(did);
      const other = await harness.openChat();
      expect((await kept(other)).did).not.toBe(did);
    },
    BROWSER_TEST_MS,
  );

  it(
    'renders Markdown from the model, and HTML in it only as text',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      // The demo model quotes the prompt, so the prompt's Markdown and HTML come back as model output.
      await chat.send('**bold** <img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>');
      const answer = await chat.waitForAnswer('completed');

      const body = chat.message(answer.id).locator('.markdown');
      expect(await body.locator('strong').first().textContent()).toBe('bold');
      expect(answer.text).toContain('<img src=x onerror="window.__pwned=1"><script>windo');
      // Model output may not load images either: an image URL can carry the conversation away.
      expect(await chat.messageList.locator('img, script, [onerror]').count()).toBe(0);
      expect(await chat.page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
      // The person's own message is shown as typed.
      const [prompt] = await chat.messages();
      expect(prompt!.text).toBe('**bold** <img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>');
      await screenshot(chat.page, 'chat-markdown');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'keeps the links and images that Markdown syntax makes harmless',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      // The demo model quotes the first 60 characters of the prompt.
      await chat.send('[r](javascript:x) [d](https://e.org) ![p](https://e.org)');
      const answer = await chat.waitForAnswer('completed');

      const body = chat.message(answer.id).locator('.markdown');
      expect(await body.locator('img').count()).toBe(0);
      expect(await body.locator('a[href^="javascript"]').count()).toBe(0);
      const docs = body.getByRole('link', { name: 'd', exact: true });
      expect(await docs.getAttribute('href')).toBe('https://e.org');
      expect(await docs.getAttribute('target')).toBe('_blank');
      expect(await docs.getAttribute('rel')).toBe('noopener noreferrer nofollow');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'starts a new thread and switches between threads',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await chat.send('first thread');
      await chat.waitForAnswer('completed');
      const firstThread = chat.threadId();

      await chat.page.getByRole('button', { name: '+ New thread' }).click();
      await chat.page.waitForFunction((previous) => !location.hash.includes(previous), firstThread);
      await chat.messageList.getByRole('heading', { name: 'Ask anything' }).waitFor();
      await chat.send('second thread');
      await chat.waitForAnswer('completed');

      const threads = chat.page.getByRole('navigation', { name: 'Threads' }).getByRole('listitem');
      await chat.page.waitForFunction(() => document.querySelectorAll('nav[aria-label="Threads"] li').length === 2);
      expect(await threads.allTextContents()).toEqual([
        expect.stringContaining('second thread'),
        expect.stringContaining('first thread'),
      ]);
      await screenshot(chat.page, 'chat-two-threads');

      await threads.getByRole('button', { name: /first thread/ }).click();
      await chat.page.waitForFunction((wanted) => location.hash === `#${wanted}`, firstThread);
      await chat.page.waitForFunction(
        () => document.querySelector('[role="log"] article .user-text')?.textContent === 'first thread',
      );
      expect((await chat.messages()).map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
