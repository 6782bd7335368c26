import type { ImportFormat } from '../frames/client-frames.js';
import { THREAD_EXPORT_FORMAT } from './thread-export.js';

/**
 * The format of an import document (parsed JSON), told from its content: a CPP JSON export is an object whose
 * `format` is `cpp-thread` (or a list of them), a ChatGPT `conversations.json` a list of conversations. `undefined`
 * when it is neither; whether it is sound is for `readImportDocument` to say. Apart from thread-import.ts so that a
 * browser can tell a file's format without zod.
 */
export function recogniseImportFormat(document: unknown): ImportFormat | undefined {
  if (isThreadExport(document)) return 'cpp-thread';
  if (!Array.isArray(document)) return undefined;
  return document.length > 0 && document.every(isThreadExport) ? 'cpp-thread' : 'chatgpt';
}

function isThreadExport(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { format?: unknown }).format === THREAD_EXPORT_FORMAT
  );
}
