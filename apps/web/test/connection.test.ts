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
  it('shows a lost connection, reconnects by itself and reopens the thread', async () => {
    const harness = await WebHarness.start();
    const chat = await harness.openChat();
    await chat.send('Before the restart');
    await chat.waitForAnswer('completed');
    const before = await chat.messages();

    const port = await harness.stopServer();
    await chat.page.getByRole('status', { name: 'Connection: Reconnecting…' }).waitFor();
    expect(await chat.page.getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await chat.page.getByText('Waiting for the connection…').waitFor();
    await screenshot(chat.page, 'connection-reconnecting');

    await harness.restartServer(port);
    await chat.page.getByRole('status', { name: 'Connection: Live' }).waitFor({ timeout: 20_000 });
    await chat.send('After the restart');
    await chat.waitForAnswer('completed', { otherThan: before[1]!.id });
    expect((await chat.messages()).slice(0, 2)).toEqual(before);
    expect(chat.problems).toEqual([]);
  }, BROWSER_TEST_MS);

  it('shows a model failure, marks the answer failed, and lets the person dismiss the error', async () => {
    const harness = await WebHarness.start({ model: new FailingModel() });
    const chat = await harness.openChat();
    await chat.send('Will this work?');
    const failed = await chat.waitForAnswer('failed');
    expect(failed.text).toBe('The first words');

    const alert = chat.page.getByRole('alert');
    await alert.getByText('the model service is overloaded').waitFor();
    expect(await alert.textContent()).toContain('PROVIDER_ERROR');
    await screenshot(chat.page, 'connection-provider-error');
    await alert.getByRole('button', { name: 'Dismiss this error' }).click();
    expect(await alert.getByText('the model service is overloaded').count()).toBe(0);

    // The thread stays usable: the next prompt gets its own answer.
    await chat.send('Try again');
    await chat.waitForAnswer('failed', { otherThan: failed.id });
    expect(chat.problems).toEqual([]);
  }, BROWSER_TEST_MS);
});
