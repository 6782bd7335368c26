import {
  type Attachment,
  type AttachmentTicketFrame,
  type ErrorCode,
  ErrorCode as ErrorCodes,
} from '@promethea/cpp-protocol';
import { CPPServerError } from './cpp-server-error.js';

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

/** A path on the session's origin, over HTTP(S) as the session is over WS(S). */
function httpUrl(sessionUrl: URL, path: string): URL {
  const url = new URL(path, sessionUrl);
  url.protocol = sessionUrl.protocol === 'wss:' ? 'https:' : 'http:';
  return url;
}
