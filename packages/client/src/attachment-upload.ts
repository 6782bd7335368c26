import {
  type Attachment,
  type AttachmentTicketFrame,
  carriedFiles,
  type ErrorCode,
  ErrorCode as ErrorCodes,
  type ThreadExport,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { CPPServerError } from './cpp-server-error.js';
import { httpUrl } from './session-url.js';

/**
 * A file for a prompt: one uploaded before (an `Attachment`, as `upload` gives it back), a `File` or a
 * `Blob` (a browser's file input, paste or drop), bytes with a name, or, in Node, a path to read.
 */
export type AttachmentSource = Attachment | Blob | NamedBytes | string;

export interface NamedBytes {
  name: string;
  bytes: Uint8Array | Blob;
}

/** A file ready to send: its name and its bytes. */
export interface UploadBody {
  name: string;
  body: Blob;
}

export type AttachmentTicket = AttachmentTicketFrame['payload'];

/**
 * A client's uploads: each file is POSTed with the session's ticket, asked for with the first upload and again once
 * it has ended (a minute to spare). An upload cut off (fetch rejects with a TypeError; the server kept nothing), or
 * refused because its ticket had just ended, is sent once more.
 */
export class AttachmentUploads {
  private ticket: Promise<AttachmentTicket> | undefined;

  constructor(
    private readonly sessionUrl: URL,
    private readonly readFile: ((path: string) => Promise<NamedBytes>) | undefined,
    private readonly requestTicket: () => Promise<AttachmentTicket>,
  ) {}

  async upload(source: AttachmentSource): Promise<Attachment> {
    if (isUploaded(source)) return source;
    const file = uploadBody(typeof source === 'string' ? await this.read(source) : source);
    try {
      return await postAttachment(this.sessionUrl, await this.currentTicket(), file);
    } catch (error) {
      const ended = CPPServerError.isInstance(error) && error.code === ErrorCodes.UNAUTHORIZED;
      if (!ended && !(error instanceof TypeError)) throw error;
      if (ended) this.ticket = undefined;
      return postAttachment(this.sessionUrl, await this.currentTicket(), file);
    }
  }

  /** The ids of files for a prompt, each uploaded first (those uploaded before as they are). */
  async ids(sources: readonly AttachmentSource[]): Promise<string[]> {
    return (await Promise.all(sources.map((source) => this.upload(source)))).map(({ id }) => id);
  }

  /** Where a file is served (PROTOCOL.md §27.5), with the ticket in the URL, for an `<img src>` or a link. */
  async url(attachmentId: string): Promise<string> {
    const { ticket, uploadPath } = await this.currentTicket();
    const url = httpUrl(this.sessionUrl, `${uploadPath}/${encodeURIComponent(attachmentId)}`);
    url.searchParams.set('ticket', ticket);
    return url.href;
  }

  /** The bytes of a file this identity may read (PROTOCOL.md §27.5). */
  async bytes(attachmentId: string): Promise<Uint8Array> {
    const response = await fetch(await this.url(attachmentId));
    if (!response.ok)
      throw new CPPServerError(
        ErrorCodes.NOT_FOUND,
        `attachment ${attachmentId} could not be read (HTTP ${response.status})`,
      );
    return new Uint8Array(await response.arrayBuffer());
  }

  /** The bytes of the files a thread's messages carry, base64 by SHA-256: the `files` of its export (§25.4). */
  async exportFiles(graph: ThreadGraph): Promise<Record<string, string>> {
    const files: Record<string, string> = {};
    for (const { id, sha256 } of carriedFiles(graph)) files[sha256] = toBase64(await this.bytes(id));
    return files;
  }

  /**
   * A CPP JSON document (an export or a list of them) whose files are uploaded first: each message names the
   * uploads, and `files` is gone, so that the import frame carries no bytes (§25.5). The document is not changed.
   */
  async uploadExportFiles(document: unknown): Promise<unknown> {
    const copy = structuredClone(document);
    for (const item of Array.isArray(copy) ? copy : [copy]) {
      const exported = item as Partial<ThreadExport> | null;
      const files = exported?.files;
      if (!exported?.thread || !files || typeof files !== 'object') continue;
      const uploaded = new Map<string, Promise<Attachment>>();
      for (const node of Object.values(exported.thread.nodes ?? {})) {
        if (!node.attachments) continue;
        node.attachments = await Promise.all(
          node.attachments.map((named) => {
            const base64 = files[named.sha256];
            if (base64 === undefined) return named;
            if (!uploaded.has(named.id))
              uploaded.set(named.id, this.upload({ name: named.name, bytes: fromBase64(base64) }));
            return uploaded.get(named.id)!;
          }),
        );
      }
      delete exported.files;
    }
    return copy;
  }

  private read(path: string): Promise<NamedBytes> {
    if (!this.readFile) throw new TypeError('a path names a file only in Node: give a File, a Blob or { name, bytes }');
    return this.readFile(path);
  }

  private async currentTicket(): Promise<AttachmentTicket> {
    const current = this.ticket && (await this.ticket.catch(() => undefined));
    if (current && current.expiresAt - Date.now() > 60_000) return current;
    this.ticket = this.requestTicket();
    return this.ticket;
  }
}

function isUploaded(source: AttachmentSource): source is Attachment {
  return typeof source === 'object' && 'id' in source && 'sha256' in source;
}

/** The name and bytes of a source that is not a path (a path is the platform's to read). */
function uploadBody(source: Blob | NamedBytes): UploadBody {
  if (source instanceof Blob) return { name: 'name' in source ? String(source.name) : 'file', body: source };
  const { name, bytes } = source;
  return { name, body: bytes instanceof Blob ? bytes : new Blob([bytes as Uint8Array<ArrayBuffer>]) };
}

/**
 * POSTs one file to the attachment endpoint of the session's origin (PROTOCOL.md §27.3) and gives back what the
 * server kept. A refusal throws a `CPPServerError` with the code the server gave (`UNAUTHORIZED` when the ticket has
 * ended: the caller asks for a new one).
 */
async function postAttachment(sessionUrl: URL, ticket: AttachmentTicket, file: UploadBody): Promise<Attachment> {
  const url = httpUrl(sessionUrl, ticket.uploadPath);
  url.searchParams.set('name', file.name);
  const response = await fetch(url, {
    method: 'POST',
    headers: { Authorization: `Bearer ${ticket.ticket}` },
    body: file.body,
  });
  const answer = (await response.json().catch(() => undefined)) as
    | Attachment
    | { code?: ErrorCode; message?: string }
    | undefined;
  if (response.status === 201 && answer && 'id' in answer) return answer;
  const refusal = answer && 'code' in answer ? answer : {};
  throw new CPPServerError(
    refusal.code ?? ErrorCodes.INTERNAL,
    refusal.message ?? `the upload of ${file.name} was answered with HTTP ${response.status}`,
  );
}

/** Base64 (RFC 4648 §4) in the browser and in Node alike, a slice at a time: no argument list of a file's length. */
function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  return btoa(binary);
}

function fromBase64(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let at = 0; at < binary.length; at += 1) bytes[at] = binary.charCodeAt(at);
  return bytes;
}

/** A path on the session's origin, over HTTP(S) as the session is over WS(S). */
