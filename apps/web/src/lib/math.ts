// Loaded on demand (import()), the first time a message shows math: KaTeX with its stylesheet and fonts.
import katex from 'katex';
import 'katex/dist/katex.min.css';

/**
 * Typesets the TeX that `element` holds as text. `trust: false` keeps out `\href`, `\url`, `\includegraphics`
 * and HTML extensions, and the size and macro-expansion limits keep a hostile formula from freezing the page;
 * a formula KaTeX cannot read stays as its source, in the error colour.
 */
export function typesetMath(element: HTMLElement): void {
  katex.render(element.textContent ?? '', element, {
    displayMode: element.classList.contains('math-display'),
    throwOnError: false,
    trust: false,
    strict: 'ignore',
    maxSize: 20,
    maxExpand: 500,
    output: 'htmlAndMathml',
  });
}
