import { CPPClient, DidKeyIdentity } from '@promethea/cpp-client';
import { describe, expect, it, onTestFinished } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('a join link', () => {
  it(
    "opens the invite's thread in a browser of another identity, which becomes a member and sees who wrote what",
    async () => {
      const harness = await WebHarness.start();
      const identity = await DidKeyIdentity.generate();
      const endpoint = `${harness.url.replace(/^http/, 'ws')}v1/cpp/session`;
      const owner = new CPPClient({ endpoint, identity, reconnect: false });
      onTestFinished(() => owner.close());
      const { threadId } = await owner.openThread();
      await owner.prompt({ userPrompt: 'Shared from the owner' });
      const { token } = await owner.createInvite('writer');

      const chat = await harness.openChat(undefined, `${harness.url}#/join/${token}`);
      await chat.page.waitForURL((url) => url.hash === `#${threadId}`);
      await chat.page.getByText('Shared from the owner').first().waitFor();
      expect((await chat.messages()).map((message) => message.text)[0]).toBe('Shared from the owner');
      // The owner's prompt names its author, by the end of the owner's DID; the browser's own prompt is "You".
      await chat.page
        .getByRole('article', { name: `Member …${identity.did.slice(-8)}` })
        .first()
        .waitFor();
      await chat.send('And one from the browser');
      await chat.page.getByRole('article', { name: /^You/ }).first().waitFor();
      await screenshot(chat.page, 'join-link-joined');
      const { members } = await owner.listMembers();
      expect(members).toEqual([{ did: expect.stringMatching(/^did:key:z6Mk/), role: 'writer' }]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'of a reader shows the thread read only: nothing can be sent',
    async () => {
      const harness = await WebHarness.start();
      const endpoint = `${harness.url.replace(/^http/, 'ws')}v1/cpp/session`;
      const owner = new CPPClient({ endpoint, identity: await DidKeyIdentity.generate(), reconnect: false });
      onTestFinished(() => owner.close());
      const { threadId } = await owner.openThread();
      await owner.prompt({ userPrompt: 'Only to be read' });
      const { token } = await owner.createInvite('reader');

      const chat = await harness.openChat(undefined, `${harness.url}#/join/${token}`);
      await chat.page.waitForURL((url) => url.hash === `#${threadId}`);
      await chat.page.getByText('Read only: its owner shared this conversation with you to read').waitFor();
      await chat.page.getByRole('textbox').fill('May I?');
      expect(await chat.page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
      // Nothing that changes the tree is offered to a reader (the server would refuse it); copying is.
      const actions = chat.page.getByRole('toolbar', { name: 'Message actions' });
      await actions.first().getByRole('button', { name: 'Copy' }).waitFor({ state: 'attached' });
      for (const name of ['Edit', 'Regenerate', 'Anchor', 'Delete', 'Continue'])
        expect(await actions.getByRole('button', { name, includeHidden: true }).count()).toBe(0);
      await screenshot(chat.page, 'join-link-reader');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
