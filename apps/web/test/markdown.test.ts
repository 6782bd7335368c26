import { describe, expect, it } from 'vitest';
import { ScriptedModel } from '../../../packages/server/test/support/scripted-model.js';
import { axeViolations } from './support/accessibility.js';
import { deltas, openAiReplay } from './support/openai-replay.js';
import { DESKTOP, screenshot, WebHarness } from './support/web-harness.js';

const BROWSER_TEST_MS = 60_000;

const RICH_ANSWER = `## Debouncing in TypeScript

A debounced function waits until calls **stop** for a while:

- call it as often as you like
- it runs once, after the pause

\`\`\`ts
export function debounce(run: () => void, ms: number): () => void {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return () => {
    clearTimeout(timer);
    timer = setTimeout(run, ms);
  };
}
\`\`\`

| Technique | Runs |
| --- | --- |
| debounce | once, after the calls stop |
| throttle | at most once per interval |

> Prefer debounce for search boxes.

- [x] write the function
- [ ] test it with fake timers

Euler wrote $e^{i\\pi} + 1 = 0$, and it costs $5 or $10 to print it:

$$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$
`;

describe('Markdown from a model, in the browser', () => {
  it(
    'renders headings, lists, highlighted code with its language and Copy, tables, quotes, task lists and math',
    async () => {
      const { model } = await openAiReplay(deltas(RICH_ANSWER));
      const harness = await WebHarness.start({ model });
      const context = await harness.newContext();
      await context.grantPermissions(['clipboard-read', 'clipboard-write']);
      const chat = await harness.openChat(context);
      const loaded: string[] = [];
      chat.page.on('request', (request) => loaded.push(new URL(request.url()).pathname));
      await chat.page.waitForLoadState('networkidle');
      // The highlighter and KaTeX are not part of the first screen.
      expect(loaded.filter((path) => /highlight|math|katex/i.test(path))).toEqual([]);

      await chat.send('How do I debounce?');
      const answer = await chat.waitForAnswer('completed');
      const body = chat.message(answer.id).locator('.markdown');
      await body.locator('code .hljs-keyword').first().waitFor();
      await body.locator('.katex-display').waitFor();

      expect(await body.getByRole('heading', { level: 2 }).textContent()).toBe('Debouncing in TypeScript');
      const code = body.locator('.code-block');
      expect(await code.locator('.code-language').textContent()).toBe('ts');
      expect(await code.locator('.hljs-keyword').first().textContent()).toBe('export');
      expect(await body.locator('table th').allTextContents()).toEqual(['Technique', 'Runs']);
      expect(await body.locator('table td').count()).toBe(4);
      expect(await body.locator('blockquote').textContent()).toContain('Prefer debounce');
      const boxes = body.locator('li input[type="checkbox"]');
      expect(await boxes.count()).toBe(2);
      expect(
        await boxes.evaluateAll((inputs) =>
          inputs.map((input) => [(input as HTMLInputElement).checked, (input as HTMLInputElement).disabled]),
        ),
      ).toEqual([
        [true, true],
        [false, true],
      ]);
      // Inline and display math are typeset; the prices stay text.
      expect(await body.locator('.katex').count()).toBe(2);
      expect(await body.textContent()).toContain('costs $5 or $10 to print');
      expect(loaded.some((path) => /highlight-.*\.js$/.test(path))).toBe(true);
      expect(loaded.some((path) => /math-.*\.js$/.test(path))).toBe(true);

      await code.getByRole('button', { name: 'Copy ts code' }).click();
      await code.getByRole('button', { name: 'Copied' }).waitFor();
      expect(await chat.page.evaluate(() => navigator.clipboard.readText())).toBe(
        RICH_ANSWER.split('```ts\n')[1]!.split('```')[0],
      );
      await screenshot(chat.page, 'markdown-rich');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'renders again only the block that streams: the finished blocks above it keep their elements',
    async () => {
      const model = new ScriptedModel({
        chunks: ['```ts\nconst answer = 42;\n```\n\n$$x^2$$\n\n', 'The ', 'code ', 'above ', 'stays.'],
      });
      const harness = await WebHarness.start({ model });
      const chat = await harness.openChat();
      await chat.send('Show me');
      const call = await model.call(0);
      call.release(1);
      const answer = await chat.waitForAnswer('streaming', { minLength: 1 });
      const body = chat.message(answer.id).locator('.markdown');
      await body.locator('code .hljs-keyword').waitFor();
      await body.locator('.katex-display').waitFor();
      // A mark on the framed code block and the typeset formula: an element rendered anew would not carry it.
      await body.locator('.code-block, .katex-display').evaluateAll((elements) => {
        for (const element of elements) (element as HTMLElement).dataset.kept = 'yes';
      });

      for (const word of ['The', 'code', 'above', 'stays.']) {
        call.release(1);
        await body.getByText(word, { exact: false }).last().waitFor();
      }
      call.release(1);
      await chat.waitForAnswer('completed');

      expect(await body.locator('.code-block[data-kept="yes"]').count()).toBe(1);
      expect(await body.locator('.katex-display[data-kept="yes"]').count()).toBe(1);
      expect(await body.locator('.code-bar').count()).toBe(1);
      expect(await body.locator('p').last().textContent()).toBe('The code above stays.');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'shows a heading only once it has text: an answer streamed or stopped just after its `## ` has no empty heading',
    async () => {
      const model = new ScriptedModel({ chunks: ['Intro.\n\n', '## ', 'Next part'] });
      const harness = await WebHarness.start({ model });
      const chat = await harness.openChat(await harness.newContext(DESKTOP, { bypassCSP: true }));
      await chat.send('Go on');
      const call = await model.call(0);
      call.release(2);
      const answer = await chat.waitForAnswer('streaming', { minLength: 11 });
      const body = chat.message(answer.id).locator('.markdown');
      await body.getByText('Intro.').waitFor();
      // An empty heading is one a screen reader announces with nothing in it (axe: empty-heading).
      expect(await body.locator('h1, h2, h3, h4, h5, h6').count()).toBe(0);
      expect(await axeViolations(chat.page)).toEqual([]);
      call.releaseAll();
      await chat.waitForAnswer('completed');
      expect(await body.getByRole('heading', { level: 2 }).textContent()).toBe('Next part');
      expect(chat.problems).toEqual([]);
    },
    BROWSER_TEST_MS,
  );

  it(
    'runs nothing and loads nothing remote that a model writes',
    async () => {
      const placeholder = 'http://LEAK';
      const hostile = [
        '<script>window.__pwned = 1</script>',
        `<img src="${placeholder}/img" onerror="window.__pwned = 2">`,
        `![chart](${placeholder}/markdown-image.png)`,
        '[click me](javascript:window.__pwned=3)',
        `<iframe src="${placeholder}/frame"></iframe>`,
        '<style>body { display: none }</style>',
        `<a href="${placeholder}/a" style="position:fixed;inset:0">cover</a>`,
        '$\\href{javascript:window.__pwned=4}{math link}$',
        `$\\includegraphics{${placeholder}/tex.png}$`,
        '```html\n<img src=x onerror="window.__pwned=5">\n```',
      ].join('\n\n');
      // A local server that counts every request: anything the page fetches from it is a leak.
      const { upstream: leakTarget } = await openAiReplay();
      const { model } = await openAiReplay(deltas(hostile.replaceAll(placeholder, leakTarget.url)));
      const harness = await WebHarness.start({ model });
      const chat = await harness.openChat();
      chat.page.on('dialog', (dialog) => void dialog.dismiss());

      await chat.send('Show me something');
      const answer = await chat.waitForAnswer('completed');
      const body = chat.message(answer.id).locator('.markdown');
      await body.locator('.katex').first().waitFor();
      await body.locator('.hljs').first().waitFor();
      await chat.page.waitForLoadState('networkidle');

      expect(leakTarget.requests).toEqual([]);
      expect(await chat.page.evaluate(() => (window as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await chat.messageList.locator('script, img, iframe, style, [onerror], [style*="fixed"]').count()).toBe(0);
      expect(await body.locator('a[href^="javascript"], a[href*="LEAK"]').count()).toBe(0);
      // The person sees what the model wrote, as text.
      expect(await body.textContent()).toContain('<script>window.__pwned = 1</script>');
      expect(await chat.page.locator('body').isVisible()).toBe(true);
      await screenshot(chat.page, 'markdown-hostile');
      expect(chat.problems).toEqual([]);

      // And if anything did get a script into the page, the page's policy would not run it.
      const ranInline = await chat.page.evaluate(() => {
        const script = document.createElement('script');
        script.textContent = 'window.__pwned = 6';
        document.body.append(script);
        return (window as { __pwned?: number }).__pwned;
      });
      expect(ranInline).toBeUndefined();
      expect(chat.problems).toEqual([
        expect.stringContaining(
          "Executing inline script violates the following Content Security Policy directive 'script-src 'self''",
        ),
      ]);
    },
    BROWSER_TEST_MS,
  );
});
