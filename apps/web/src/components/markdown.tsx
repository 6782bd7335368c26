import { memo, useMemo } from 'react';
import { renderMarkdown } from '../lib/safe-markdown.js';

interface MarkdownProps {
  text: string;
  report(error: unknown): void;
}

/** Model output as sanitised Markdown; re-rendered only when the text changes. */
export const Markdown = memo(function Markdown({ text }: MarkdownProps) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <div className="markdown" dangerouslySetInnerHTML={{ __html: html }} />;
});
