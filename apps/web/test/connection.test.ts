import { ProviderError, type ModelProvider, type ModelRequest, type ModelStreamPart } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
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
