import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  ATTACHMENT_ID_PATTERN,
  type Attachment,
  CPPError,
  ErrorCode,
  attachmentName,
  isImageType,
  newAttachmentId,
} from '@promethea/cpp-protocol';
import { originAllowed, SAME_ORIGIN } from '../auth/origin-policy.js';
import type { Identity } from '../engine/identity.js';
import type { AttachmentRecord, ConversationStore } from '../store/conversation-store.js';
import type { AttachmentLimits } from './attachment-options.js';
import { FileSniffer } from './attachment-sniffer.js';
import type { AttachmentTickets } from './attachment-ticket.js';

/** Where files are uploaded (POST) and served (GET `<path>/<attachmentId>`): docs/PROTOCOL.md §27. */
export const ATTACHMENTS_PATH = '/v1/cpp/attachments';

const DAY_MS = 24 * 60 * 60 * 1000;

const HTTP_STATUS: Partial<Record<ErrorCode, number>> = {
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  ATTACHMENT_TOO_LARGE: 413,
  UNSUPPORTED_ATTACHMENT: 415,
  RATE_LIMITED: 429,
  INVALID_FRAME: 400,
};

export interface AttachmentEndpointDependencies {
  store: ConversationStore;
  tickets: AttachmentTickets;
  limits: AttachmentLimits;
  /** The origins whose pages may use the endpoints (`CPPServerOptions.allowedOrigins`), as for the session. */
  allowedOrigins: readonly string[];
  /** Whether the identity may read the thread (its owner's only, or anyone's where a thread id is the capability). */
  mayRead(threadId: string, identity: Identity): Promise<boolean>;
  now(): number;
  /** A failure the client only sees as INTERNAL. */
  onError(error: unknown): void;
}

/**
 * The attachment endpoints beside the WebSocket, on the same port: a POST stores a file for the ticket's identity,
 * a GET serves one to an identity that may read it. Every answer but a served file is JSON; a refusal is
 * `{code, message}` with the code's HTTP status.
 */
export class AttachmentEndpoint {
  constructor(private readonly dependencies: AttachmentEndpointDependencies) {}

  /** Whether the path is this endpoint's; if so the request is answered. */
  handle(request: IncomingMessage, response: ServerResponse, path: string): boolean {
    if (path !== ATTACHMENTS_PATH && !path.startsWith(`${ATTACHMENTS_PATH}/`)) return false;
    if (this.crossOrigin(request, response)) return true;
    this.answer(request, response, path).catch((error: unknown) => this.refuse(response, error));
    return true;
  }

  /**
   * CORS, for pages of the origins the session takes (a ticket, not a cookie, is the credential, so no request
   * carries the visitor's rights by itself): their requests are answered readable, and a preflight (OPTIONS) is
   * answered here; true when it was one.
   */
  private crossOrigin(request: IncomingMessage, response: ServerResponse): boolean {
    const { origin } = request.headers;
    const allowed = origin !== undefined && originAllowed(request, this.dependencies.allowedOrigins);
    if (allowed) response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Vary', 'Origin');
    if (request.method !== 'OPTIONS') return false;
    if (!allowed) {
      sendJson(response, 403, { code: ErrorCode.FORBIDDEN, message: `pages of ${origin ?? 'no origin'} may not` });
      return true;
    }
    response.writeHead(204, {
      'Access-Control-Allow-Methods': 'POST, GET, HEAD',
      'Access-Control-Allow-Headers': 'Authorization',
      'Access-Control-Max-Age': '600',
    });
    response.end();
    return true;
  }

  private async answer(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const identity = this.identityOf(request, url);
    if (path === ATTACHMENTS_PATH) {
      if (request.method !== 'POST') return methodNotAllowed(response, 'POST');
      return this.upload(request, response, identity, url.searchParams.get('name') ?? '');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') return methodNotAllowed(response, 'GET, HEAD');
    return this.serve(request, response, identity, path.slice(ATTACHMENTS_PATH.length + 1));
  }

  /** The ticket's identity: from `Authorization: Bearer`, or the `ticket` parameter where no header can be set. */
  private identityOf(request: IncomingMessage, url: URL): Identity {
    const header = request.headers.authorization;
    const ticket = header?.startsWith('Bearer ')
      ? header.slice('Bearer '.length).trim()
      : url.searchParams.get('ticket');
    const identity = ticket ? this.dependencies.tickets.verify(ticket, this.dependencies.now()) : undefined;
    if (!identity) {
      throw new CPPError(
        ErrorCode.UNAUTHORIZED,
        'a valid ticket is required: ask for one with CPP_ATTACHMENT_TICKET_REQUEST on the session',
      );
    }
    return identity;
  }

  private async upload(
    request: IncomingMessage,
    response: ServerResponse,
    identity: Identity,
    givenName: string,
  ): Promise<void> {
    const { store, limits } = this.dependencies;
    const now = this.dependencies.now();
    const declared = Number(request.headers['content-length'] ?? Number.NaN);
    if (declared > limits.maxBytes) throw tooLarge(limits.maxBytes);
    const uploadedToday = await store.uploadedBytesSince(identity.did, now - DAY_MS);
    if (uploadedToday + (Number.isNaN(declared) ? 0 : declared) > limits.bytesPerDay)
      throw overQuota(limits.bytesPerDay);
    const upload = await store.openAttachment(Number.isSafeInteger(declared) ? declared : undefined);
    try {
      const sniffer = new FileSniffer();
      const { size, sha256 } = await readBody(request, limits.maxBytes, (piece) => {
        sniffer.update(piece);
        return upload.write(piece);
      });
      if (uploadedToday + size > limits.bytesPerDay) throw overQuota(limits.bytesPerDay);
      const sniffed = await sniffer.result(limits.maxImagePixels);
      const attachment: Attachment = {
        id: newAttachmentId(),
        name: attachmentName(givenName),
        ...sniffed,
        size,
        sha256,
      };
      // Uploads nobody used go first: each upload sweeps, so no timer is needed and a quiet server keeps nothing longer.
      await store.deleteUnusedAttachments(now - limits.unusedTtlMs);
      await upload.finish({ ...attachment, ownerDid: identity.did, threadId: null, createdAt: now });
      sendJson(response, 201, attachment);
    } finally {
      await upload.close();
    }
  }

  private async serve(
    request: IncomingMessage,
    response: ServerResponse,
    identity: Identity,
    attachmentId: string,
  ): Promise<void> {
    const { store } = this.dependencies;
    const [record] = ATTACHMENT_ID_PATTERN.test(attachmentId) ? await store.loadAttachments([attachmentId]) : [];
    // Another identity's attachment is answered as one that does not exist, word for word.
    if (!record || !(await this.mayRead(record, identity))) throw notFound(attachmentId);
    const bytes = await store.attachmentBytes(record.sha256);
    if (!bytes) throw notFound(attachmentId);
    sendAttachment(request, response, record, bytes, this.embeddable);
  }

  private get embeddable(): boolean {
    return this.dependencies.allowedOrigins.some((origin) => origin !== SAME_ORIGIN);
  }

  private async mayRead(record: AttachmentRecord, identity: Identity): Promise<boolean> {
    if (record.threadId === null) return record.ownerDid === identity.did;
    return this.dependencies.mayRead(record.threadId, identity);
  }

  private refuse(response: ServerResponse, error: unknown): void {
    // An upload cut off has nobody left to answer.
    if (response.headersSent || !response.socket || response.socket.destroyed) return void response.destroy();
    if (CPPError.isInstance(error)) {
      const status = HTTP_STATUS[error.code] ?? 400;
      return sendJson(response, status, { code: error.code, message: error.message });
    }
    this.dependencies.onError(error);
    sendJson(response, 500, { code: ErrorCode.INTERNAL, message: 'the server failed; nothing was stored' });
  }
}

/**
 * Serves an attachment's bytes (to its reader, or to a share link's, PROTOCOL.md §29.10) so that nothing in them can
 * act: an attachment's disposition but for images, its sniffed type, and a sandbox. `embeddable`: the server takes
 * other origins, whose pages may show it (an <img> of another origin sends no Origin).
 */
export function sendAttachment(
  request: IncomingMessage,
  response: ServerResponse,
  record: Attachment,
  bytes: Uint8Array,
  embeddable: boolean,
): void {
  const inline = isImageType(record.mediaType);
  response.writeHead(200, {
    'Content-Type': record.mediaType === 'text/plain' ? 'text/plain; charset=utf-8' : record.mediaType,
    'Content-Length': bytes.length,
    'Content-Disposition': `${inline ? 'inline' : 'attachment'}; filename*=UTF-8''${encodeRFC5987(record.name)}`,
    'X-Content-Type-Options': 'nosniff',
    // Whatever the bytes hold, a browser opening them runs nothing, loads nothing and has no origin to act in.
    'Content-Security-Policy': "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox",
    'Cross-Origin-Resource-Policy': embeddable ? 'cross-origin' : 'same-origin',
    'Referrer-Policy': 'no-referrer',
    'Cache-Control': 'private, max-age=3600',
    ETag: `"${record.sha256}"`,
  });
  response.end(request.method === 'HEAD' ? undefined : bytes);
}

/**
 * The request's body, read as it arrives and refused as soon as it passes `maxBytes`: a larger upload is never held
 * whole (what follows is read and dropped until the refusal has gone out and the connection closes). A request cut
 * off midway rejects.
 *
 * Each piece the socket gives is hashed, counted and handed to `take` (the sniffer, and the store's upload, which
 * writes it) as it comes, nothing joined, each after the one before has been taken; a piece that comes while the one
 * before is still being taken pauses the request until both are, so the store sets the pace (a store that takes
 * pieces at once costs no pause). At the end, only the hash's digest is left to compute.
 */
function readBody(
  request: IncomingMessage,
  maxBytes: number,
  take: (piece: Buffer) => Promise<void>,
): Promise<{ size: number; sha256: string }> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    let size = 0;
    let taken = Promise.resolve();
    /** Pieces handed on and not taken yet. */
    let pending = 0;
    let failed = false;
    const fail = (error: unknown) => {
      failed = true;
      // What is left is read and dropped.
      request.resume();
      reject(error);
    };
    request.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > maxBytes) return fail(tooLarge(maxBytes));
      hash.update(chunk);
      pending += 1;
      if (pending > 1) request.pause();
      taken = taken
        .then(() => take(chunk))
        .then(() => {
          pending -= 1;
          if (pending === 0 && !failed) request.resume();
        })
        .catch(fail);
    });
    request.on('end', () => {
      taken.then(() => {
        if (!failed) resolve({ size, sha256: hash.digest('hex') });
      });
    });
    request.on('close', () => {
      if (!request.complete) fail(new Error('the upload was cut off before its end'));
    });
  });
}

function sendJson(response: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  };
  // A refused upload's unread rest is not waited for: the connection closes after the answer.
  if (status >= 400 && !response.req.complete) headers.Connection = 'close';
  response.writeHead(status, headers);
  response.end(text);
}

function methodNotAllowed(response: ServerResponse, allowed: string): void {
  response.setHeader('Allow', allowed);
  sendJson(response, 405, { code: ErrorCode.INVALID_FRAME, message: `use ${allowed}` });
}

function tooLarge(maxBytes: number): CPPError {
  return new CPPError(ErrorCode.ATTACHMENT_TOO_LARGE, `the file is larger than ${maxBytes} bytes, the limit`);
}

function overQuota(bytesPerDay: number): CPPError {
  return new CPPError(ErrorCode.RATE_LIMITED, `this upload would pass ${bytesPerDay} bytes in 24 hours, the limit`);
}

function notFound(attachmentId: string): CPPError {
  return new CPPError(ErrorCode.NOT_FOUND, `attachment ${attachmentId} does not exist`);
}

/** A file name for `filename*` (RFC 6266, 5987): UTF-8, percent-encoded, so no quote or line break can end it. */
function encodeRFC5987(name: string): string {
  return encodeURIComponent(name).replace(
    /['()*]/g,
    (character) => `%${character.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}
