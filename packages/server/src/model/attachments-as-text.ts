import type {
  ModelAttachment,
  ModelMessage,
  ModelProvider,
  ModelRequest,
  ModelStreamPart,
  ModelUserMessage,
} from './model-provider.js';
import { pdfText } from './pdf-text.js';

/**
 * The messages with every file given as text, for a model that takes none (docs/PROTOCOL.md §27.7): a text file
 * inlined with its name after the prompt, a PDF's text likewise, any other file named with a note saying the model
 * cannot see it. Never a silent drop: the model always knows what the person attached.
 */
export async function attachmentsAsText(messages: readonly ModelMessage[]): Promise<ModelMessage[]> {
  return Promise.all(
    messages.map(async (message) => {
      if (!carriesFiles(message)) return message;
      const files = await Promise.all(message.attachments.map(fileAsText));
      return { role: 'user', content: [...promptText(message.content), ...files].join('\n\n') };
    }),
  );
}

/**
 * A prompt's text as a list of one, or none when it says nothing: a prompt of files alone (docs/PROTOCOL.md §6.5)
 * gives the model its files only, never an empty text part, which some vendors refuse.
 */
export function promptText(content: string): string[] {
  return content.trim() === '' ? [] : [content];
}

function carriesFiles(message: ModelMessage): message is Required<ModelUserMessage> {
  return message.role === 'user' && message.attachments !== undefined && message.attachments.length > 0;
}

/** A file's text for a model: the contents of a text file, the text of a PDF's pages, a note naming any other. */
export async function fileAsText(file: ModelAttachment): Promise<string> {
  const name = JSON.stringify(file.name);
  if (file.mediaType === 'text/plain') {
    const text = new TextDecoder().decode(await file.bytes());
    return `<file name=${name}>\n${text}\n</file>`;
  }
  if (file.mediaType === 'application/pdf') {
    const extracted = await pdfText(await file.bytes());
    if (extracted) {
      const cut =
        extracted.pagesRead < extracted.pages ? ` (its first ${extracted.pagesRead} of ${extracted.pages} pages)` : '';
      return `<file name=${name} type="application/pdf" pages="${extracted.pages}">\n${extracted.text}\n</file>${cut}`;
    }
  }
  return `[The person attached ${describeFile(file)}; this model cannot read it, so only its name is given.]`;
}

/** E.g. `the image "cat.png" (image/png, 640×480 pixels, 12 KB)`. */
export function describeFile(file: Omit<ModelAttachment, 'bytes'>): string {
  const kind = file.mediaType.startsWith('image/')
    ? 'the image'
    : file.mediaType === 'application/pdf'
      ? 'the PDF'
      : 'the file';
  const pixels = file.width && file.height ? `, ${file.width}×${file.height} pixels` : '';
  return `${kind} ${JSON.stringify(file.name)} (${file.mediaType}${pixels}, ${formatBytes(file.size)})`;
}

export function formatBytes(size: number): string {
  if (size < 1024) return `${size} bytes`;
  if (size < 1024 * 1024) return `${(size / 1024).toFixed(1)} KB`;
  return `${(size / (1024 * 1024)).toFixed(1)} MB`;
}

/** A provider that reads no files, given each as text (`attachmentsAsText`) before its request. */
export class AttachmentsAsTextProvider implements ModelProvider {
  constructor(private readonly inner: ModelProvider) {}

  get provider(): string {
    return this.inner.provider;
  }

  get model(): string {
    return this.inner.model;
  }

  get reasoning(): boolean | undefined {
    return this.inner.reasoning;
  }

  /**
   * A request without files goes to the provider as it is, in the same turn: the answer's model call then leaves
   * before the commit of its node (`ThreadAnswer.spawn`), where waiting for the files' text — even of none — put it
   * after, and made a promise per message of the branch on every prompt.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    if (!request.messages.some(carriesFiles)) return this.inner.stream(request);
    return this.withFilesAsText(request);
  }

  private async *withFilesAsText(request: ModelRequest): AsyncIterable<ModelStreamPart> {
    yield* this.inner.stream({ ...request, messages: await attachmentsAsText(request.messages) });
  }
}
