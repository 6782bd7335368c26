import { describe, expect, it } from 'vitest';
import { seriousViolations } from './support/accessibility.js';
import { deltas, openAiReplay } from './support/openai-replay.js';
import { PHONE, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 90_000;

const ANSWER = `### A table, code and math

| a | b |
| --- | --- |
| 1 | 2 |

\`\`\`js
const answer = 42;
\`\`\`

> quoted

- [x] done

$a^2 + b^2 = c^2$`;

describe('accessibility (axe-core) in the browser', () => {
  it(
    'has no serious or critical violations: empty, answered with rich Markdown, with its actions shown, in error, and asking before a delete',
    async () => {
      const { model } = await openAiReplay(deltas(ANSWER), deltas('A second answer.'));
      const harness = await WebHarness.start({ model, limits: { maxPromptLength: 20 } });
      const chat = await harness.openChat();
      expect(await seriousViolations(chat.page)).toEqual([]);

      await chat.send('Show me everything');
      const answer = await chat.waitForAnswer('completed');
      await chat.message(answer.id).locator('.katex').waitFor();
      await chat.message(answer.id).locator('.hljs-keyword').first().waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);

      const [prompt] = await chat.messages();
      await chat.send('and again, differently');
      await chat.page.getByRole('alert').locator('.error').waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);
      await chat.message(prompt!.id).hover();
      await chat.action(answer.id, 'Regenerate').waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);

      // Both questions asked in place: a message's Delete and the thread's.
      await chat.action(answer.id, 'Delete').click();
      await chat.message(answer.id).getByRole('group', { name: 'Confirm deletion' }).waitFor();
      await chat.page.getByRole('button', { name: 'Delete thread' }).click();
      await chat.page
        .getByRole('navigation', { name: 'Threads' })
        .getByRole('group', { name: 'Confirm deletion' })
        .waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'has no serious or critical violations on a phone, with the threads and the tree open',
    async () => {
      const harness = await WebHarness.start();
      const chat = await harness.openChat(await harness.newContext(PHONE));
      await chat.twoTurns();
      expect(await seriousViolations(chat.page)).toEqual([]);
      await chat.page.getByRole('button', { name: '☰ Threads', exact: true }).click();
      await chat.page.getByRole('navigation', { name: 'Threads' }).waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);
      await chat.page.keyboard.press('Escape');
      await chat.page.getByRole('button', { name: 'Tree' }).click();
      await chat.page.getByRole('navigation', { name: 'Conversation tree' }).waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'has no serious or critical violations in dark mode, with code, a table, an error and the question before a delete',
    async () => {
      const { model } = await openAiReplay(deltas(ANSWER));
      const harness = await WebHarness.start({ model, limits: { maxPromptLength: 20 } });
      const chat = await harness.openChat(await harness.newContext(undefined, { colorScheme: 'dark' }));
      await chat.send('Show me everything');
      const answer = await chat.waitForAnswer('completed');
      await chat.message(answer.id).locator('.hljs-keyword').first().waitFor();
      await chat.send('and again, differently');
      await chat.page.getByRole('alert').locator('.error').waitFor();
      await screenshot(chat.page, 'dark-mode');
      expect(await seriousViolations(chat.page)).toEqual([]);
      // The question before a delete, its Delete button red as in the light theme.
      await chat.action(answer.id, 'Delete').click();
      await chat.message(answer.id).getByRole('group', { name: 'Confirm deletion' }).waitFor();
      expect(await seriousViolations(chat.page)).toEqual([]);
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );
});
