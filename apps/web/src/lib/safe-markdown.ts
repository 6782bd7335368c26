import DOMPurify from 'dompurify';
import { Marked, type TokenizerAndRendererExtension } from 'marked';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character]!);
}

/**
 * `$$…$$` on lines of its own, and `$…$` inside a line, become placeholders holding the TeX as text; KaTeX,
 * loaded only when a message has math, typesets them (see math.ts). An inline `$` must hug its content and not
 * be followed by a digit, so that prices ("$5 and $10") stay text, as in Pandoc.
 */
const displayMath: TokenizerAndRendererExtension = {
  name: 'displayMath',
  level: 'block',
  start: (source) => source.indexOf('$$'),
  tokenizer(source) {
    const match = /^\$\$([\s\S]+?)\$\$[^\S\n]*(?:\n|$)/.exec(source);
    return match ? { type: 'displayMath', raw: match[0], text: match[1]!.trim() } : undefined;
  },
  renderer: (token) => `<div class="math math-display">${escapeHtml(String(token.text))}</div>\n`,
};

const inlineMath: TokenizerAndRendererExtension = {
  name: 'inlineMath',
  level: 'inline',
  start: (source) => source.indexOf('$'),
  tokenizer(source) {
    const match = /^\$\$([^$]+?)\$\$|^\$(?![\s$])((?:\\.|[^\\$\n])+?)(?<![\s\\])\$(?!\d)/.exec(source);
    if (!match) return undefined;
    const display = match[1] !== undefined;
    return { type: 'inlineMath', raw: match[0], text: (match[1] ?? match[2])!.trim(), display };
  },
  renderer: (token) =>
    `<span class="math math-${token.display ? 'display' : 'inline'}">${escapeHtml(String(token.text))}</span>`,
};

/**
 * HTML written by the model is shown as the text it is, never rendered: a half-streamed or cut `<script` would
 * otherwise swallow everything after it, and the person should see exactly what the model wrote.
 */
const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html: ({ text }) => escapeHtml(text),
    // `## ` with nothing after it yet (streaming, or an answer stopped there) is not a heading: an empty one is
    // announced by a screen reader as a heading with nothing in it. `false` renders the others as marked does.
    heading: ({ text }) => (text.trim() === '' ? '' : false),
  },
  extensions: [displayMath, inlineMath],
});

/**
 * Images are left out too: a model tricked by its input could put the conversation into an image URL, and the
 * browser would send it away just by showing the image. Task-list checkboxes are the one input kept, and only
 * disabled ones (as marked writes them).
 */
const FORBID_TAGS = [
  'img',
  'picture',
  'video',
  'audio',
  'source',
  'style',
  'form',
  'button',
  'iframe',
  'object',
  'embed',
  'svg',
  'math',
  'link',
  'meta',
];

// Model output is untrusted: links open elsewhere and never keep a handle on this page; the only input left is a
// task list's checkbox, which the person cannot tick (the model wrote it; ticking it would change nothing).
DOMPurify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName === 'A') {
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noopener noreferrer nofollow');
  }
  if (node.tagName === 'INPUT') {
    if (node.getAttribute('type') !== 'checkbox') node.remove();
    else {
      node.setAttribute('disabled', '');
      node.setAttribute('aria-label', node.hasAttribute('checked') ? 'done' : 'not done');
    }
  }
});

/**
 * Markdown as HTML that is safe to insert. Raw HTML in the text is escaped by the renderer; DOMPurify then
 * removes whatever Markdown itself can produce that is unsafe (a `javascript:` link, an image). Styles and ids
 * are dropped, so that a model cannot cover the page with its own layout or clash with the page's ids.
 */
export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(markdown.parse(text) as string, { FORBID_TAGS, FORBID_ATTR: ['style', 'id', 'name'] });
}

/**
 * The text's top-level blocks (heading, paragraph, list, code block, table …), each as the Markdown it was written
 * in: an answer that streams changes only its last block, so the blocks above it need not be rendered again. A text
 * that defines link references is one block: a block rendered alone would lose the links another one defines.
 */
export function markdownBlocks(text: string): string[] {
  const tokens = markdown.lexer(text);
  if (Object.keys(tokens.links).length > 0) return [text];
  return tokens.filter((token) => token.type !== 'space').map((token) => token.raw);
}
