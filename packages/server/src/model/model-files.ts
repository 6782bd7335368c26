import type { AttachmentMediaType } from '@promethea/cpp-protocol';
import { fileAsText, promptText } from './attachments-as-text.js';
import type { ModelMessage, ModelUserMessage } from './model-provider.js';

/** A file as a vendor's format takes it: what it is, and its bytes, loaded. */
export interface LoadedFile {
  name: string;
  mediaType: AttachmentMediaType;
  data: Uint8Array;
}

/** A prompt whose files are ready for a vendor: those it takes, loaded; the others already text in `content`. */
export interface FileUserMessage {
  role: 'user';
  content: string;
  files?: LoadedFile[];
}

export type FileMessage = Exclude<ModelMessage, ModelUserMessage> | FileUserMessage;

/**
 * The messages with each prompt's files made ready for one vendor (docs/PROTOCOL.md §27.7): a file whose type it
 * `takes` is loaded for its own format; any other is given as text after the prompt (`fileAsText`), so that no file
 * is silently dropped.
 */
export async function withFiles(
  messages: readonly ModelMessage[],
  takes: (mediaType: AttachmentMediaType) => boolean,
): Promise<FileMessage[]> {
  return Promise.all(
    messages.map(async (message): Promise<FileMessage> => {
      if (message.role !== 'user') return message;
      const attachments = message.attachments ?? [];
      const taken = attachments.filter((file) => takes(file.mediaType));
      const texts = await Promise.all(attachments.filter((file) => !takes(file.mediaType)).map(fileAsText));
      const files = await Promise.all(
        taken.map(async ({ name, mediaType, bytes }) => ({ name, mediaType, data: await bytes() })),
      );
      return { role: 'user', content: [...promptText(message.content), ...texts].join('\n\n'), files };
    }),
  );
}

/** A file's bytes as a `data:` URL, as OpenAI's `image_url` takes an image. */
export function dataUrl(file: LoadedFile): string {
  return `data:${file.mediaType};base64,${base64(file)}`;
}

export function base64(file: LoadedFile): string {
  return Buffer.from(file.data.buffer, file.data.byteOffset, file.data.byteLength).toString('base64');
}
