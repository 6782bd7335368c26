import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}

/**
 * HTML written by the model is shown as the text it is, never rendered: a half-streamed or cut `<script` would
 * otherwise swallow everything after it, and the person should see exactly what the model wrote.
 */
const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
  },
});

/**
 * Images are left out too: a model tricked by its input could put the conversation into an image URL, and the
 * browser would send it away just by showing the image.
 */
const FORBID_TAGS = ['img', 'picture', 'video', 'audio', 'source', 'style', 'form', 'input', 'button'];

// Model output is untrusted: links open elsewhere and never keep a handle on this page.
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
});

/**
 * Markdown as HTML that is safe to insert. Raw HTML in the text is escaped by the renderer; DOMPurify then
 * removes whatever Markdown itself can produce that is unsafe (a `javascript:` link, an image).
 */
export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(markdown.parse(text) as string, { FORBID_TAGS });
}
