import { describe, expect, it } from 'vitest';
import { waitForFocus } from './support/chat-page.js';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

describe('regenerate, edit and delete in the browser', () => {
  it(
    'regenerates an answer beside it, edits a prompt beside it, and deletes a branch',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { first, second } = await chat.twoTurns();

      await chat.action(second.id, 'Regenerate').click();
      const regenerated = await chat.waitForAnswer('completed', { otherThan: second.id });
      await chat.message(regenerated.id).getByRole('group', { name: 'Branch 2 of 2' }).waitFor();
      await screenshot(chat.page, 'tree-regenerated');

      const prompt = (await chat.messages())[2]!;
      expect(prompt.text).toBe('two');
      await chat.action(prompt.id, 'Edit').click();
      // Edited in place: the box holds the old text, focused, and Enter sends the new text beside it.
      const editBox = chat.message(prompt.id).getByRole('textbox', { name: 'Edit message' });
      expect(await editBox.inputValue()).toBe('two');
      expect(await editBox.evaluate((box) => box === document.activeElement)).toBe(true);
      await screenshot(chat.page, 'tree-editing');
      await editBox.fill('two, differently');
      await editBox.press('Enter');
      const edited = await chat.waitForAnswer('completed', { otherThan: regenerated.id });
      const afterEdit = await chat.messages();
      expect(afterEdit.map((message) => message.text.slice(0, 16))).toEqual([
        'one',
        first.text.slice(0, 16),
        'two, differently',
        edited.text.slice(0, 16),
      ]);
      await chat.message(afterEdit[2]!.id).getByRole('group', { name: 'Branch 2 of 2' }).waitFor();
      await screenshot(chat.page, 'tree-edited');

      // Deleting asks first, in place, with the focus on the question's Delete; Esc says no and gives the focus back.
      const doomed = afterEdit[2]!.id;
      await chat.action(doomed, 'Delete').click();
      const confirm = chat.message(doomed).getByRole('group', { name: 'Confirm deletion' });
      await waitForFocus(confirm.getByRole('button', { name: 'Delete' }));
      await screenshot(chat.page, 'tree-delete-confirm');
      await chat.page.keyboard.press('Escape');
      await confirm.waitFor({ state: 'detached' });
      await waitForFocus(chat.action(doomed, 'Delete'));
      expect(chat.frames.sent.some((frame) => frame.type === 'CPP_BRANCH_DELETE')).toBe(false);

      // From the keyboard: Enter asks, Enter again deletes, and the focus goes to the message above, which stays.
      await chat.page.keyboard.press('Enter');
      await waitForFocus(confirm.getByRole('button', { name: 'Delete' }));
      await chat.page.keyboard.press('Enter');
      await chat.page.waitForFunction((id) => !document.querySelector(`[data-node-id="${id}"]`), doomed);
      expect((await chat.messages()).map((message) => message.id)).toEqual([afterEdit[0]!.id, first.id]);
      expect(chat.frames.lastSent('CPP_BRANCH_DELETE')?.payload).toMatchObject({ nodeId: doomed });
      await waitForFocus(chat.message(first.id));
      const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });
      expect(await tree.locator('.tree-node').count()).toBe(5);
      await screenshot(chat.page, 'tree-deleted');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'edits the first message like any other: its versions switch with ‹ 1/2 ›, each with its own answers',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat();
      const { first, second } = await chat.twoTurns();
      const [opening] = await chat.messages();

      await chat.action(opening!.id, 'Edit').click();
      const editBox = chat.message(opening!.id).getByRole('textbox', { name: 'Edit message' });
      await editBox.fill('one, differently');
      await editBox.press('Enter');
      const answer = await chat.waitForAnswer('completed', { otherThan: second.id });
      expect(chat.frames.lastSent('CPP_PROMPT')?.payload).toMatchObject({
        userPrompt: 'one, differently',
        parentNodeId: null,
      });
      const edited = await chat.messages();
      expect(edited.map((message) => message.text.slice(0, 16))).toEqual([
        'one, differently',
        answer.text.slice(0, 16),
      ]);
      const versions = chat.message(edited[0]!.id).getByRole('group', { name: 'Branch 2 of 2' });
      await versions.waitFor();
      await screenshot(chat.page, 'tree-first-prompt-edited');

      // The first version comes back whole, with the turns that followed it.
      await versions.getByRole('button', { name: 'Previous branch' }).click();
      await chat.message(opening!.id).getByRole('group', { name: 'Branch 1 of 2' }).waitFor();
      expect((await chat.messages()).map((message) => message.id)).toEqual([
        opening!.id,
        first.id,
        (await chat.messages())[2]!.id,
        second.id,
      ]);

      // A version of the first message is deleted like any message; the other version stays, with nothing to switch.
      await chat.action(opening!.id, 'Delete').click();
      await chat
        .message(opening!.id)
        .getByRole('group', { name: 'Confirm deletion' })
        .getByRole('button', { name: 'Delete' })
        .click();
      await chat.page.waitForFunction((id) => !document.querySelector(`[data-node-id="${id}"]`), opening!.id);
      const remaining = await chat.messages();
      expect(remaining.map((message) => message.id)).toEqual([edited[0]!.id, answer.id]);
      expect(
        await chat
          .message(edited[0]!.id)
          .getByRole('group', { name: /^Branch / })
          .count(),
      ).toBe(0);
      // The only first message left goes only with its thread: no Delete.
      expect(await chat.action(edited[0]!.id, 'Delete').count()).toBe(0);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
