import { ProviderError, type ModelProvider, type ModelRequest, type ModelStreamPart } from '@promethea/cpp-server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { TcpProxy } from '../../../packages/server/test/support/tcp-proxy.js';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

/** A model whose service gives out after the first words of every answer. */
class FailingModel implements ModelProvider {
  readonly provider = 'failing';
  readonly model = 'failing-model';

  async *stream(_request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    yield { type: 'text-delta', text: 'The first words' };
    throw new ProviderError('the model service is overloaded', { status: 529 });
  }
}

describe('connection and errors in the browser', () => {
  it(
    'shows a lost connection, takes a prompt while away, and sends it once reconnected',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await chat.send('Before the restart');
      const before = await chat.waitForAnswer('completed');
      const shownBefore = await chat.messages();

      const port = await harness.stopServer();
      await chat.page.getByRole('status', { name: 'Connection: Reconnecting…' }).waitFor();
      await chat.page
        .getByText('Not connected yet: what you send goes out as soon as the connection is back.')
        .waitFor();
      await chat.composer.fill('Sent while away');
      await screenshot(chat.page, 'connection-reconnecting');
      await chat.composer.press('Enter');

      await harness.restartServer(port);
      await chat.page.getByRole('status', { name: 'Connection: Live' }).waitFor({ timeout: 20_000 });
      const after = await chat.waitForAnswer('completed', { otherThan: before.id });
      const shown = await chat.messages();
      expect(shown.slice(0, 2)).toEqual(shownBefore);
      expect(shown.map((message) => message.text.slice(0, 15))).toEqual([
        'Before the rest',
        before.text.slice(0, 15),
        'Sent while away',
        after.text.slice(0, 15),
      ]);
      // Chromium itself logs each reconnection attempt that finds the server down: that is what this test does to it.
      expect(chat.problems.filter((problem) => !/^WebSocket connection to '[^']*' failed: /.test(problem))).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows an answer cut off by a dead server as such, keeps a message sent meanwhile as unsent, and says when it is back',
    async () => {
      // The server dies as a crash or a cut network kills it, with no goodbye: the page reaches it through a proxy
      // that is cut, and the server, unaware, goes on writing the answer.
      const harness = await WebHarness.start({ slow: true });
      const proxy = await TcpProxy.start(harness.url);
      onTestFinished(() => proxy.close());
      const chat = await harness.openChat(undefined, proxy.url(harness.url));
      await chat.send('Tell me about trees');
      const answer = await chat.waitForAnswer('streaming', { minLength: 40 });
      await chat.page.getByRole('button', { name: '■ Stop' }).waitFor();

      await proxy.cut();
      await chat.page.getByRole('status', { name: 'Connection: Reconnecting…' }).waitFor();
      // No blinking cursor, no Stop, no pivot: the answer is cut off by the connection, and said to be.
      const cut = chat.message(answer.id);
      await cut.getByText('The connection is lost: the answer stops here until it is back.').waitFor();
      expect(await cut.getAttribute('aria-label')).toBe('Assistant, cut off by the lost connection');
      expect(await cut.evaluate((element) => element.classList.contains('status-streaming'))).toBe(false);
      expect(await chat.page.getByRole('button', { name: '■ Stop' }).count()).toBe(0);
      await chat.composer.fill('Sent while away');
      expect(await chat.page.getByText('Sending now pivots').count()).toBe(0);
      await chat.composer.press('Enter');
      // The message stays on screen, as not sent yet.
      const unsent = chat.messageList.locator('.pending-message');
      await unsent.getByText('Sent while away').waitFor();
      await unsent.getByText('Not sent yet: it goes out once the connection is back.').waitFor();
      expect(await chat.composer.inputValue()).toBe('');

      await proxy.restore();
      await chat.page.getByRole('status', { name: 'Connection: Live' }).waitFor({ timeout: 20_000 });
      await chat.page
        .getByRole('status')
        .getByText('Connected again: the conversation is up to date, and what you send goes out now.')
        .waitFor();
      // Delivered: the unsent copy gives way to the message itself, branching from the cut answer.
      const after = await chat.waitForAnswer('streaming', { otherThan: answer.id });
      await unsent.waitFor({ state: 'detached' });
      const shown = await chat.messages();
      expect(shown.map((message) => [message.role, message.status])).toEqual([
        ['user', 'completed'],
        ['assistant', 'interrupted'],
        ['user', 'completed'],
        ['assistant', 'streaming'],
      ]);
      expect(shown[2]!.text).toBe('Sent while away');
      expect(shown[3]!.id).toBe(after.id);
      expect(chat.problems.filter((problem) => !/^WebSocket connection to '[^']*' failed: /.test(problem))).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows a model failure, marks the answer failed, and lets the person dismiss the error',
    async () => {
      const harness = await WebHarness.start({ model: new FailingModel() });
      const chat = await harness.openChat();
      await chat.send('Will this work?');
      const failed = await chat.waitForAnswer('failed');
      expect(failed.text).toBe('The first words');

      const alert = chat.page.getByRole('alert');
      // In words, as a sentence; the protocol's code is on hover.
      await alert.getByText('The model service is overloaded.').waitFor();
      expect(await alert.locator('.error').getAttribute('title')).toBe('Error code PROVIDER_ERROR');
      await screenshot(chat.page, 'connection-provider-error');
      await alert.getByRole('button', { name: 'Dismiss this error' }).click();
      expect(await alert.getByText('the model service is overloaded').count()).toBe(0);

      // The thread stays usable: the next prompt gets its own answer.
      await chat.send('Try again');
      await chat.waitForAnswer('failed', { otherThan: failed.id });
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
