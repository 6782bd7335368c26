import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const markdown = new Marked({ gfm: true, async: false });

// Model output is untrusted: links open elsewhere and never keep a handle on this page.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

/**
 * Markdown as HTML that is safe to insert: `marked` renders (passing any raw HTML in the text through), then
 * DOMPurify removes every script, event handler and dangerous URL from the result.
 */
export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(markdown.parse(text) as string, { FORBID_TAGS: ['style', 'form', 'input', 'button'] });
}
