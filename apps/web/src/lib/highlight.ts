// Loaded on demand (import()), the first time a message shows a code block: highlight.js's common languages are
// larger than the rest of the UI's first screen.
import hljs from 'highlight.js/lib/common';

/**
 * Colours `code` in place when its language is one highlight.js knows. highlight.js escapes the code it is given
 * and writes only `<span class="hljs-…">`, so the result is as safe as the text was.
 */
export function highlightCode(code: HTMLElement, language: string): void {
  if (!hljs.getLanguage(language)) return;
  code.innerHTML = hljs.highlight(code.textContent ?? '', { language, ignoreIllegals: true }).value;
  code.classList.add('hljs');
}
