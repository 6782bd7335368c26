import { describe, expect, it } from 'vitest';
import { screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

describe('regenerate, edit and delete in the browser', () => {
  it('regenerates an answer beside it, edits a prompt beside it, and deletes a branch', async () => {
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
    expect(afterEdit.map((message) => message.text.slice(0, 16))).toEqual(['one', first.text.slice(0, 16), 'two, differently', edited.text.slice(0, 16)]);
    await chat.message(afterEdit[2]!.id).getByRole('group', { name: 'Branch 2 of 2' }).waitFor();
    await screenshot(chat.page, 'tree-edited');

    chat.page.once('dialog', (dialog) => void dialog.accept());
    await chat.action(afterEdit[2]!.id, 'Delete').click();
    await chat.page.waitForFunction((id) => !document.querySelector(`[data-node-id="${id}"]`), afterEdit[2]!.id);
    expect((await chat.messages()).map((message) => message.id)).toEqual([afterEdit[0]!.id, first.id]);
    const tree = chat.page.getByRole('navigation', { name: 'Conversation tree' });
    expect(await tree.locator('.tree-node').count()).toBe(5);
    await screenshot(chat.page, 'tree-deleted');
    expect(chat.problems).toEqual([]);
  }, BROWSER_TEST_MS);
});
