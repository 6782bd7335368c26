import { recogniseImportFormat, THREAD_EXPORT_FORMAT, type ImportFormat } from '@promethea/cpp-protocol';

/** A file to import, read: the format its content says it is in, and the parsed document for `importThreads`. */
export interface ImportFile {
  format: ImportFormat;
  document: unknown;
}

/**
 * Reads the text of a file to import and tells its format from its content, not its name: a CPP JSON export or a
 * ChatGPT `conversations.json` (`recogniseImportFormat`). The server checks the document itself; this only throws,
 * in words, for text that is not JSON or is neither kind of document.
 */
export function readImportFile(text: string): ImportFile {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new Error(`the file is not JSON (${error instanceof Error ? error.message : String(error)})`);
  }
  const format = recogniseImportFormat(document);
  if (format === undefined) {
    throw new Error(
      `the file is neither a CPP thread export (an object with "format": "${THREAD_EXPORT_FORMAT}") nor a ChatGPT conversations.json (a list of conversations)`,
    );
  }
  return { format, document };
}
