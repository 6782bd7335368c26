import type { IncomingMessage, ServerResponse } from 'node:http';
import { ATTACHMENT_MEDIA_TYPES, type ServerPayload } from '@promethea/cpp-protocol';
import type { Identity } from '../engine/identity.js';
import type { ConversationStore } from '../store/conversation-store.js';
import { ATTACHMENTS_PATH, AttachmentEndpoint } from './attachment-endpoint.js';
import {
  type AttachmentOptions,
  DEFAULT_ATTACHMENT_LIMITS,
  MAX_ATTACHMENTS_PER_PROMPT,
  type AttachmentLimits,
} from './attachment-options.js';
import { AttachmentTickets } from './attachment-ticket.js';

export interface AttachmentsDependencies {
  store: ConversationStore;
  allowedOrigins: readonly string[];
  mayRead(threadId: string, identity: Identity): Promise<boolean>;
  onError(error: unknown): void;
}

/** Files in prompts, on the server's side: the tickets a session hands out and the HTTP endpoint that takes them. */
export class Attachments {
  readonly limits: AttachmentLimits;
  private readonly tickets: AttachmentTickets;
  private readonly endpoint: AttachmentEndpoint;

  constructor(options: AttachmentOptions, dependencies: AttachmentsDependencies) {
    const { ticketSecret, ...limits } = options;
    this.limits = { ...DEFAULT_ATTACHMENT_LIMITS, ...limits };
    this.tickets = new AttachmentTickets(ticketSecret, this.limits.ticketTtlMs);
    this.endpoint = new AttachmentEndpoint({
      ...dependencies,
      tickets: this.tickets,
      limits: this.limits,
      now: () => Date.now(),
    });
  }

  /** CPP_ATTACHMENT_TICKET for a connection of `identity`. */
  ticket(identity: Identity): ServerPayload<'CPP_ATTACHMENT_TICKET'> {
    return {
      ...this.tickets.issue(identity, Date.now()),
      uploadPath: ATTACHMENTS_PATH,
      maxBytes: this.limits.maxBytes,
      maxPerPrompt: MAX_ATTACHMENTS_PER_PROMPT,
      mediaTypes: [...ATTACHMENT_MEDIA_TYPES],
    };
  }

  /** Answers a request to the attachment endpoints; false when the path is not theirs. */
  handle(request: IncomingMessage, response: ServerResponse, path: string): boolean {
    return this.endpoint.handle(request, response, path);
  }
}
