/** The most pages of a PDF whose text a model that reads no PDF is given (docs/PROTOCOL.md §27.7). */
export const PDF_PAGES_MAX = 100;

/** The most characters of a PDF's text given, so that one file cannot fill a model's context by itself. */
export const PDF_TEXT_MAX_LENGTH = 200_000;

/**
 * The text of a PDF's first pages, each page's after a blank line, for a model that cannot read the PDF itself;
 * `undefined` when the PDF cannot be read or has no text (a scan). `unpdf` (pdf.js for servers) is loaded with the
 * first PDF.
 */
export async function pdfText(
  bytes: Uint8Array,
): Promise<{ text: string; pages: number; pagesRead: number } | undefined> {
  const { getDocumentProxy } = await import('unpdf');
  try {
    // pdf.js takes the buffer over, and refuses a Buffer: it is given a plain copy.
    const document = await getDocumentProxy(new Uint8Array(bytes));
    try {
      const pagesRead = Math.min(document.numPages, PDF_PAGES_MAX);
      const pages: string[] = [];
      for (let number = 1; number <= pagesRead; number += 1) {
        const page = await document.getPage(number);
        const content = await page.getTextContent();
        pages.push(content.items.map((item: object) => ('str' in item ? String(item.str) : '')).join(' '));
      }
      const text = pages.join('\n\n').trim().slice(0, PDF_TEXT_MAX_LENGTH);
      return text === '' ? undefined : { text, pages: document.numPages, pagesRead };
    } finally {
      await document.destroy();
    }
  } catch {
    return undefined;
  }
}
