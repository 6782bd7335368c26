import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('branches in the browser', () => {
  it(
    'anchors an old message, branches from it, switches branches, and shows the same tree after a reload',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { first, second } = await chat.twoTurns();

      await chat.action(first.id, 'Anchor').click();
      await chat.page.getByText('Your next message branches from').waitFor();
      expect((await chat.messages()).map((message) => message.id)).toEqual([expect.any(String), first.id]);
      expect(await chat.action(first.id, 'Anchor').getAttribute('aria-pressed')).toBe('true');
      await screenshot(chat.page, 'branch-anchored');

      await chat.send('three');
      const third = await chat.waitForAnswer('completed', { otherThan: first.id });
      const forked = await chat.messages();
      expect(forked.map((message) => message.text.slice(0, 5))).toEqual([
        'one',
        first.text.slice(0, 5),
        'three',
        third.text.slice(0, 5),
      ]);
      const fork = chat.message(forked[2]!.id).getByRole('group', { name: 'Branch 2 of 2' });
      await fork.waitFor();
      await screenshot(chat.page, 'branch-forked');

      await fork.getByRole('button', { name: 'Previous branch' }).click();
      await chat.waitForAnswer('completed', { otherThan: third.id });
      const switched = await chat.messages();
      expect(switched.map((message) => message.id)).toEqual([forked[0]!.id, first.id, expect.any(String), second.id]);
      expect(switched[2]!.text).toBe('two');
      await chat.message(switched[2]!.id).getByRole('group', { name: 'Branch 1 of 2' }).waitFor();
      expect(await chat.message(second.id).getAttribute('class')).toContain('is-head');
      await screenshot(chat.page, 'branch-sibling');

      // The tree shows every message; choosing one from the keyboard shows its branch.
      const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });
      expect(await tree.locator('.tree-node').count()).toBe(6);
      await tree.locator(`[data-node-id="${third.id}"]`).focus();
      await chat.page.keyboard.press('Enter');
      await chat.waitForAnswer('completed', { otherThan: second.id });
      expect((await chat.messages()).map((message) => message.id)).toEqual(forked.map((message) => message.id));

      await chat.page.reload();
      await chat.waitUntilReady();
      await chat.waitForAnswer('completed');
      expect(await chat.messages()).toEqual(forked.map((message) => ({ ...message, status: 'completed' })));
      expect(await tree.locator('.tree-node').count()).toBe(6);
      expect(await tree.locator('.tree-node.is-head').getAttribute('data-node-id')).toBe(third.id);
      await screenshot(chat.page, 'branch-reloaded');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'offers Anchor on answers only, and sends from a prompt without its answer as another version of that prompt',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { first, second } = await chat.twoTurns();
      const [, , prompt] = await chat.messages();
      await chat.message(prompt!.id).hover();
      await chat.action(prompt!.id, 'Edit').waitFor();
      expect(await chat.action(prompt!.id, 'Anchor').count()).toBe(0);
      expect(await chat.action(first.id, 'Anchor').count()).toBe(1);

      // Its answer deleted, the prompt is the head: the next message goes beside it, not under it.
      await chat.action(second.id, 'Delete').click();
      await chat.message(second.id).getByRole('button', { name: 'Delete', exact: true }).click();
      await chat.message(second.id).waitFor({ state: 'detached' });
      await chat.page.getByText('Your next message goes beside').waitFor();
      await chat.send('two, asked again');
      const again = await chat.waitForAnswer('completed', { otherThan: first.id });
      const shown = await chat.messages();
      expect(shown.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
      expect(shown.map((message) => message.text.slice(0, 16))).toEqual([
        'one',
        first.text.slice(0, 16),
        'two, asked again',
        again.text.slice(0, 16),
      ]);
      // Its switcher counts the two versions of the prompt, and nothing else.
      await chat.message(shown[2]!.id).getByRole('group', { name: 'Branch 2 of 2' }).waitFor();
      expect(await chat.message(first.id).getByRole('group').count()).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'sends from a first prompt without its answer as another first prompt',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      await chat.send('one');
      const answer = await chat.waitForAnswer('completed');
      await chat.action(answer.id, 'Delete').click();
      await chat.message(answer.id).getByRole('button', { name: 'Delete', exact: true }).click();
      await chat.message(answer.id).waitFor({ state: 'detached' });
      await chat.page.getByText('Your next message goes beside').waitFor();
      await chat.send('one, asked again');
      await chat.waitForAnswer('completed', { otherThan: answer.id });
      const shown = await chat.messages();
      expect(shown.map((message) => message.role)).toEqual(['user', 'assistant']);
      expect(shown[0]!.text).toBe('one, asked again');
      await chat.message(shown[0]!.id).getByRole('group', { name: 'Branch 2 of 2' }).waitFor();
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'returns from an anchored message to the latest answer of its branch',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { first, second } = await chat.twoTurns();
      await chat.action(first.id, 'Anchor').click();
      await chat.page.getByRole('button', { name: 'Back to latest' }).click();
      await chat.waitForAnswer('completed', { otherThan: first.id });
      expect((await chat.lastMessage()).id).toBe(second.id);
      expect(await chat.page.getByText('Your next message branches from').count()).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
