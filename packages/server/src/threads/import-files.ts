import { createHash } from 'node:crypto';
import {
  type Attachment,
  attachmentName,
  dropImportedMessage,
  ImportDocumentError,
  type ImportedThread,
  newAttachmentId,
} from '@promethea/cpp-protocol';
import { sniffFile } from '../attachments/attachment-sniffer.js';
import type { AttachmentLimits } from '../attachments/attachment-options.js';
import { type ConversationStore, putAttachment } from '../store/conversation-store.js';

/** A file of a ChatGPT data export's archive whose name begins with `fileId`, or `undefined` when it holds none. */
export type ArchiveFiles = (fileId: string) => Promise<{ name: string; bytes: Uint8Array } | undefined>;

export interface ImportFilesContext {
  store: ConversationStore;
  ownerDid: string;
  limits: Pick<AttachmentLimits, 'maxBytes' | 'maxImagePixels'>;
  /** The archive the document came in (a ChatGPT export's .zip), whose images its messages show. */
  archive?: ArchiveFiles | undefined;
  now: number;
}

/**
 * Gives the messages of an imported thread the files they carry, as the store keeps them (PROTOCOL.md §25.5): each
 * file is kept as an upload of the owner, which the import's commit makes the thread's, as a prompt's commit does.
 *
 * - CPP JSON: a file whose bytes the document holds (`files`, by SHA-256) is kept from them (the bytes must have that
 *   SHA-256; the type is sniffed again); any other file a message names must be an upload of the owner that no prompt
 *   carries yet (a client that uploaded the bytes first, to keep its frame small); else `ImportDocumentError`.
 * - ChatGPT: each image a message showed is kept from the archive, when it holds the image and it is a type a
 *   server takes; an image the archive lacks (a `conversations.json` given alone) is left out, as before, and a
 *   prompt of images alone none of which is kept is taken out of the thread.
 *
 * The files are kept before the threads are written: an import that then fails leaves uploads no prompt carries,
 * which go after a day (§27.8).
 */
export async function keepImportedFiles(thread: ImportedThread, context: ImportFilesContext): Promise<void> {
  if (thread.imageFileIds) return keepArchiveImages(thread, thread.imageFileIds, context);
  const kept = new Map<string, Attachment>();
  for (const node of Object.values(thread.graph.nodes)) {
    if (!node.attachments?.length) continue;
    const carried: Attachment[] = [];
    for (const named of node.attachments) {
      let attachment = kept.get(named.id);
      if (!attachment) {
        attachment = await documentFile(thread, named, context);
        kept.set(named.id, attachment);
      }
      carried.push(attachment);
    }
    node.attachments = carried;
  }
}

async function documentFile(
  thread: ImportedThread,
  named: Attachment,
  context: ImportFilesContext,
): Promise<Attachment> {
  const base64 = thread.files?.[named.sha256];
  if (base64 !== undefined) {
    const bytes = Buffer.from(base64, 'base64');
    if (sha256(bytes) !== named.sha256)
      throw new ImportDocumentError(`the bytes the document holds for ${named.name} do not have its SHA-256`);
    return keep(named.name, bytes, context);
  }
  const [upload] = await context.store.loadAttachments([named.id]);
  if (upload && upload.ownerDid === context.ownerDid && upload.threadId === null) {
    const { ownerDid: _owner, threadId: _thread, createdAt: _created, ...attachment } = upload;
    return attachment;
  }
  throw new ImportDocumentError(
    `a message carries ${named.name} (${named.id}), whose bytes the document does not hold, and which is no upload of yours that a prompt could name`,
  );
}

async function keepArchiveImages(
  thread: ImportedThread,
  imageFileIds: Record<string, string[]>,
  context: ImportFilesContext,
): Promise<void> {
  const { archive } = context;
  for (const [nodeId, fileIds] of Object.entries(imageFileIds)) {
    const node = thread.graph.nodes[nodeId];
    if (!node) continue;
    const carried: Attachment[] = [];
    for (const fileId of fileIds) {
      const file = await archive?.(fileId);
      // An image a server does not take (or a broken one) is left out, as images always were: the text comes in.
      const attachment = file && (await keep(file.name, file.bytes, context).catch(() => undefined));
      if (attachment && !carried.some(({ sha256 }) => sha256 === attachment.sha256)) carried.push(attachment);
    }
    if (carried.length > 0) node.attachments = carried;
    // A prompt of images alone none of which came says nothing: left out, as a message without text is.
    else if (node.content.trim() === '') dropImportedMessage(thread, nodeId);
  }
}

/** Keeps bytes as an upload of the owner, held to the limits an upload is held to: the type from the bytes. */
async function keep(name: string, bytes: Uint8Array, context: ImportFilesContext): Promise<Attachment> {
  const { store, ownerDid, limits, now } = context;
  if (bytes.length > limits.maxBytes)
    throw new ImportDocumentError(`${name} is larger than ${limits.maxBytes} bytes, the limit of a file`);
  const attachment: Attachment = {
    id: newAttachmentId(),
    name: attachmentName(name),
    ...(await sniffFile(bytes, limits.maxImagePixels)),
    size: bytes.length,
    sha256: sha256(bytes),
  };
  await putAttachment(store, { ...attachment, ownerDid, threadId: null, createdAt: now }, bytes);
  return attachment;
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}
