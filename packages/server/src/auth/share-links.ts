import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CPPError,
  ErrorCode,
  pathToRoot,
  type MessageNode,
  type ServerPayload,
  type ShareScope,
  type ThreadGraph,
} from '@promethea/cpp-protocol';
import { sendAttachment } from '../attachments/attachment-endpoint.js';
import type { Identity } from '../engine/identity.js';
import type { ConversationStore, ShareLinkRecord } from '../store/conversation-store.js';
import { securityHeaders } from '../http-headers.js';
import { SHARE_STYLESHEET, SHARE_STYLESHEET_PATH, type ShareSnapshot, sharePage } from './share-page.js';
import type { ThreadAccess } from './thread-access.js';

/** Where share links' pages are served: `/share/<token>`, and a page's attachments below it. */
export const SHARE_PATH = '/share';

const TOKEN_PATTERN = /^cppshr_[A-Za-z0-9_-]{43}$/;

export interface ShareLinkLimits {
  /** Share links one identity may have at once, across its threads (0: no limit). */
  maxShareLinksPerDid: number;
}

/**
 * Read-only share links (docs/PROTOCOL.md §29.10): a snapshot of a thread, read by whoever has the link, without an
 * identity or a socket, until its owner revokes it. The token is 256 random bits, told once and stored as its SHA-256.
 */
export class ShareLinks {
  private readonly pages = new RenderedPages();

  constructor(
    private readonly access: ThreadAccess,
    private readonly store: ConversationStore,
    private readonly limits: ShareLinkLimits,
    /** The server takes other origins than its own: their pages may show a shared image. */
    private readonly embeddable: () => boolean,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** CPP_SHARE_LINK_CREATE: the owner's. The snapshot is the thread as this server's copy has it now. */
  async create(threadId: string, scope: ShareScope, identity: Identity): Promise<ServerPayload<'CPP_SHARE_LINK'>> {
    const engine = await this.access.thread(threadId, identity, 'own');
    const max = this.limits.maxShareLinksPerDid;
    const held = max > 0 ? await this.store.countShareLinks(identity.did) : 0;
    if (max > 0 && held >= max)
      throw new CPPError(ErrorCode.RATE_LIMITED, `${identity.did} has ${held} share links; the limit is ${max}`);
    const token = `cppshr_${randomBytes(32).toString('base64url')}`;
    const snapshot: ShareSnapshot = { title: engine.record.title, scope, nodes: snapshotNodes(engine.graph, scope) };
    const link: ShareLinkRecord = {
      linkId: `shr_${randomBytes(16).toString('base64url')}`,
      threadId,
      ownerDid: identity.did,
      tokenHash: hashOf(token),
      scope,
      createdAt: this.now(),
      snapshot: JSON.stringify(snapshot),
    };
    if (!(await this.store.createShareLink(link)))
      throw new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} does not exist`);
    const { linkId, createdAt } = link;
    return { threadId, token, path: `${SHARE_PATH}/${token}`, link: { linkId, scope, createdAt } };
  }

  /** CPP_SHARE_LINK_LIST: the owner's. */
  async list(threadId: string, identity: Identity): Promise<ServerPayload<'CPP_SHARE_LINKS'>> {
    await this.access.thread(threadId, identity, 'own');
    return { threadId, links: await this.store.shareLinks(threadId) };
  }

  /** CPP_SHARE_LINK_REVOKE: the owner's; its page and files are gone at once, on every server. */
  async revoke(threadId: string, linkId: string, identity: Identity): Promise<ServerPayload<'CPP_SHARE_LINKS'>> {
    await this.access.thread(threadId, identity, 'own');
    this.pages.delete(linkId);
    if (!(await this.store.revokeShareLink(threadId, linkId)))
      throw new CPPError(ErrorCode.NOT_FOUND, `thread ${threadId} has no share link ${linkId}`);
    return { threadId, links: await this.store.shareLinks(threadId) };
  }

  /**
   * Answers a request below SHARE_PATH: the stylesheet, a link's page, or a file a message of the page carries. True
   * when the path was one of these (answered, 404 included); false, leaving the request alone, otherwise.
   */
  handle(request: IncomingMessage, response: ServerResponse, path: string): boolean {
    if (path !== SHARE_PATH && !path.startsWith(`${SHARE_PATH}/`)) return false;
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      respond(response, 405, 'text/plain; charset=utf-8', 'a share link is read with GET\n', { Allow: 'GET, HEAD' });
      return true;
    }
    if (path === SHARE_STYLESHEET_PATH) {
      respond(response, 200, 'text/css; charset=utf-8', SHARE_STYLESHEET, { 'Cache-Control': 'public, max-age=3600' });
      return true;
    }
    const [token = '', below, attachmentId, ...rest] = path.slice(SHARE_PATH.length + 1).split('/');
    const file = below === 'attachments' && attachmentId !== undefined && rest.length === 0;
    if (!TOKEN_PATTERN.test(token) || (below !== undefined && !file)) {
      gone(response);
      return true;
    }
    this.serve(request, response, token, file ? attachmentId : undefined).catch(() => {
      if (!response.headersSent) respond(response, 500, 'text/plain; charset=utf-8', 'the server failed\n');
      else response.destroy();
    });
    return true;
  }

  private async serve(
    request: IncomingMessage,
    response: ServerResponse,
    token: string,
    attachmentId: string | undefined,
  ): Promise<void> {
    // The store is asked every time, page kept or not: a revoked link is gone at once, on every server.
    const link = await this.store.findShareLink(hashOf(token));
    if (!link) return gone(response);
    if (attachmentId === undefined) {
      let page = this.pages.get(link.linkId);
      if (page === undefined) {
        // markdown-it and its helpers load with the first page read, not with the server.
        const { renderMarkdown } = await import('./share-markdown.js');
        const snapshot = JSON.parse(link.snapshot) as ShareSnapshot;
        page = sharePage(snapshot, `${SHARE_PATH}/${token}`, link.createdAt, renderMarkdown);
        this.pages.set(link.linkId, page);
      }
      return respond(response, 200, 'text/html; charset=utf-8', page, {
        ...securityHeaders(undefined),
        // A revoked link must stop showing at once: no cache keeps the page.
        'Cache-Control': 'no-store',
      });
    }
    // Only a file a message of the snapshot carries, and still the thread's.
    const snapshot = JSON.parse(link.snapshot) as ShareSnapshot;
    const carried = snapshot.nodes.some((node) => node.attachments?.some((file) => file.id === attachmentId));
    const [record] = carried ? await this.store.loadAttachments([attachmentId]) : [];
    const bytes = record?.threadId === link.threadId ? await this.store.attachmentBytes(record.sha256) : undefined;
    if (!record || !bytes) return gone(response);
    sendAttachment(request, response, record, bytes, this.embeddable());
  }
}

/** Characters of rendered pages a server keeps: a few of the largest threads' pages, or many small ones. */
const KEPT_PAGE_CHARACTERS = 16 * 1024 * 1024;

/**
 * Share pages as rendered, by link, the least recently read dropped first. A snapshot never changes, so neither does
 * its page; but rendering the Markdown of a thread of megabytes takes seconds of the event loop, which every other
 * connection waits through, and anyone who has a link may read it again and again. A page longer than the whole
 * allowance is not kept.
 */
export class RenderedPages {
  private readonly pages = new Map<string, string>();
  private characters = 0;

  constructor(private readonly maxCharacters = KEPT_PAGE_CHARACTERS) {}

  get(linkId: string): string | undefined {
    const page = this.pages.get(linkId);
    if (page === undefined) return undefined;
    // Read again: the most recent, last in the map's order.
    this.pages.delete(linkId);
    this.pages.set(linkId, page);
    return page;
  }

  set(linkId: string, page: string): void {
    if (page.length > this.maxCharacters) return;
    this.delete(linkId);
    this.pages.set(linkId, page);
    this.characters += page.length;
    for (const [oldest, kept] of this.pages) {
      if (this.characters <= this.maxCharacters) break;
      this.pages.delete(oldest);
      this.characters -= kept.length;
    }
  }

  delete(linkId: string): void {
    const page = this.pages.get(linkId);
    if (page === undefined) return;
    this.pages.delete(linkId);
    this.characters -= page.length;
  }
}

/** What a link keeps of the thread: the active branch, or every node with each parent before its children. */
function snapshotNodes(graph: ThreadGraph, scope: ShareScope): MessageNode[] {
  const copy = (node: MessageNode): MessageNode => structuredClone(node);
  if (scope === 'branch')
    return graph.activeHeadMessageId === null ? [] : pathToRoot(graph, graph.activeHeadMessageId).map(copy);
  const ordered: MessageNode[] = [];
  const stack = Object.values(graph.nodes)
    .filter((node) => node.parentId === null)
    .sort((a, b) => b.createdAt - a.createdAt);
  for (let node = stack.pop(); node; node = stack.pop()) {
    ordered.push(copy(node));
    for (const childId of [...node.childrenIds].reverse()) {
      const child = graph.nodes[childId];
      if (child) stack.push(child);
    }
  }
  return ordered;
}

/** Every link that shows nothing — unknown, revoked, its thread deleted, a file it does not carry — is the same 404. */
function gone(response: ServerResponse): void {
  respond(response, 404, 'text/plain; charset=utf-8', 'no share link here\n', securityHeaders(undefined));
}

function respond(
  response: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  headers: Record<string, string> = {},
): void {
  response.writeHead(status, {
    ...headers,
    'Content-Type': contentType,
    'Content-Length': Buffer.byteLength(body),
  });
  response.end(response.req.method === 'HEAD' ? undefined : body);
}

function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
