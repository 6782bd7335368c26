import { memo, useEffect, useLayoutEffect, useMemo, useRef, useState, type MouseEvent } from 'react';
import { COPIED_MS } from '../hooks/use-copy.js';
import { loadedMarkdown, markdownReady } from '../lib/markdown-loader.js';

// The highlighter and KaTeX are fetched the first time a message needs them, and then kept.
let highlighter: Promise<typeof import('../lib/highlight.js')> | undefined;
let typesetter: Promise<typeof import('../lib/math.js')> | undefined;

interface MarkdownProps {
  text: string;
  report(error: unknown): void;
}

/**
 * Model output as sanitised Markdown, block by block: while an answer streams only its last block changes, and only
 * that block is rendered and enhanced again (the whole answer again on every chunk cost the page tens of
 * milliseconds a chunk, more as the answer grew). Code blocks get their language and a Copy button, then colours;
 * math is typeset. Both happen on the sanitised DOM, after it is in the page.
 */
export const Markdown = memo(function Markdown({ text, report }: MarkdownProps) {
  const [renderer, setRenderer] = useState(loadedMarkdown);
  useEffect(() => {
    if (!renderer) markdownReady.then(setRenderer, report);
  }, [renderer, report]);
  const blocks = useMemo(() => renderer?.markdownBlocks(text), [renderer, text]);

  const onClick = (event: MouseEvent<HTMLDivElement>) => {
    const button = (event.target as HTMLElement).closest<HTMLButtonElement>('button.code-copy');
    const code = button?.closest('.code-block')?.querySelector('code');
    if (!button || !code) return;
    const label = button.getAttribute('aria-label');
    navigator.clipboard.writeText(code.textContent ?? '').then(() => {
      button.textContent = 'Copied';
      button.setAttribute('aria-label', 'Copied');
      setTimeout(() => {
        button.textContent = 'Copy';
        if (label) button.setAttribute('aria-label', label);
      }, COPIED_MS);
    }, report);
  };

  // Until the renderer is here (only ever on a slow first load), the text as it is.
  if (!renderer || !blocks) return <p className="markdown plain-text">{text}</p>;
  return (
    // biome-ignore lint/a11y: one listener for the Copy buttons of every code block inside, which are buttons that the keyboard reaches and presses
    <div className="markdown" onClick={onClick}>
      {blocks.map((source, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a block is its place in the text: the last one grows as it streams, those above it never change
        <MarkdownBlock key={index} source={source} render={renderer.renderMarkdown} report={report} />
      ))}
    </div>
  );
});

interface MarkdownBlockProps {
  source: string;
  render(source: string): string;
  report(error: unknown): void;
}

/** One block of a message (`display: contents`: its elements lay out as the message's own). */
const MarkdownBlock = memo(function MarkdownBlock({ source, render, report }: MarkdownBlockProps) {
  const html = useMemo(() => render(source), [render, source]);
  const container = useRef<HTMLDivElement>(null);
  const enhanced = useRef<string | undefined>(undefined);

  useLayoutEffect(() => {
    const root = container.current;
    // React writes the DOM anew only when the html changes (not when `report` does): enhancing the same DOM twice
    // framed its code blocks twice and typeset the typeset formulas' own text.
    if (!root || enhanced.current === html) return;
    enhanced.current = html;
    const blocks = [...root.querySelectorAll<HTMLElement>('pre > code')].map(frameCodeBlock);
    const highlighted = blocks.filter((block) => block.language !== undefined);
    if (highlighted.length > 0) {
      highlighter ??= import('../lib/highlight.js');
      highlighter.then(({ highlightCode }) => {
        for (const { code, language } of highlighted) if (code.isConnected) highlightCode(code, language!);
      }, report);
    }
    const formulas = [...root.querySelectorAll<HTMLElement>('.math')];
    if (formulas.length > 0) {
      typesetter ??= import('../lib/math.js');
      typesetter.then(({ typesetMath }) => {
        for (const formula of formulas) if (formula.isConnected) typesetMath(formula);
      }, report);
    }
  }, [html, report]);

  // biome-ignore lint/security/noDangerouslySetInnerHtml: renderMarkdown's HTML has passed DOMPurify (lib/safe-markdown.ts); tested in markdown.test.ts
  return <div ref={container} className="markdown-block" dangerouslySetInnerHTML={{ __html: html }} />;
});

/** Puts a bar above a `<pre>` with the block's language and a Copy button (a button the sanitiser never sees). */
function frameCodeBlock(code: HTMLElement): { code: HTMLElement; language: string | undefined } {
  const language = /(?:^|\s)language-([\w+#.-]+)/.exec(code.className)?.[1];
  const pre = code.parentElement!;
  const frame = document.createElement('div');
  frame.className = 'code-block';
  const bar = document.createElement('div');
  bar.className = 'code-bar';
  const label = document.createElement('span');
  label.className = 'code-language';
  label.textContent = language ?? 'text';
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'quiet code-copy';
  copy.tabIndex = -1;
  copy.textContent = 'Copy';
  copy.setAttribute('aria-label', language ? `Copy ${language} code` : 'Copy code');
  bar.append(label, copy);
  pre.replaceWith(frame);
  frame.append(bar, pre);
  return { code, language };
}
