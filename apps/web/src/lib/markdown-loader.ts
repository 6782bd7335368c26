type MarkdownModule = typeof import('./safe-markdown.js');

let loaded: MarkdownModule | undefined;

/**
 * The Markdown renderer (marked and DOMPurify, a fifth of the UI's code) in a chunk of its own, fetched as the page
 * starts, beside the first screen's code rather than inside it: the page is interactive without it, and it is
 * here long before the first answer is.
 */
export const markdownReady: Promise<MarkdownModule> = import('./safe-markdown.js').then((module) => (loaded = module));

/** The renderer, once it has loaded. */
export function loadedMarkdown(): MarkdownModule | undefined {
  return loaded;
}
