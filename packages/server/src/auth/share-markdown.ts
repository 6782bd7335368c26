import MarkdownIt from 'markdown-it';

/**
 * An answer's Markdown as a share page shows it: headings, lists, code, tables and links, as the web UI renders
 * them. The text is a model's, so it is untrusted: raw HTML stays the text it is (`html: false`), links to
 * `javascript:`, `vbscript:`, `file:` and `data:` are not made (markdown-it's `validateLink`, after entities are
 * decoded), and every attribute is escaped.
 */
const markdown = new MarkdownIt({ html: false, linkify: true });
const { escapeHtml } = markdown.utils;

// A link leaves the page with no handle on it and no referrer, and vouches for nothing (a model wrote it).
markdown.renderer.rules.link_open = (tokens, index, options, _env, renderer) => {
  tokens[index]!.attrSet('target', '_blank');
  tokens[index]!.attrSet('rel', 'noopener noreferrer nofollow');
  return renderer.renderToken(tokens, index, options);
};

// An image is its description, as in the web UI: a model tricked by its input could put the conversation into an
// image's URL, and a reader's browser would send it away just by showing the page.
markdown.renderer.rules.image = (tokens, index, options, env, renderer) =>
  escapeHtml(renderer.renderInlineAsText(tokens[index]!.children ?? [], options, env));

// A column's alignment as a class: the page's policy allows no inline style.
for (const cell of ['th_open', 'td_open']) {
  markdown.renderer.rules[cell] = (tokens, index, options, _env, renderer) => {
    const token = tokens[index]!;
    const align = /text-align:(left|center|right)/.exec(String(token.attrGet('style') ?? ''))?.[1];
    token.attrs = token.attrs?.filter(([name]) => name !== 'style') ?? null;
    if (align) token.attrJoin('class', `align-${align}`);
    return renderer.renderToken(tokens, index, options);
  };
}

/** Markdown as HTML fit to put in a share page as it is. */
export function renderMarkdown(text: string): string {
  return markdown.render(text);
}
