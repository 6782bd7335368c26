import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Identity } from '../engine/identity.js';

const TICKET_VERSION = 'v1';
const MIN_SECRET_LENGTH = 32;

const TicketClaimsSchema = z.object({ did: z.string(), verified: z.boolean(), exp: z.number().int() });

/**
 * Tickets to the attachment endpoints (docs/PROTOCOL.md §27.2): the identity of the connection that asked, and when
 * the ticket ends, signed with HMAC-SHA-256, so that any server holding the key takes it without a look-up.
 */
export class AttachmentTickets {
  private readonly key: Buffer;

  constructor(
    secret: string | undefined,
    private readonly ttlMs: number,
  ) {
    if (secret !== undefined && secret.length < MIN_SECRET_LENGTH)
      throw new Error(`the attachment ticket secret must be at least ${MIN_SECRET_LENGTH} characters`);
    this.key = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  issue(identity: Identity, now: number): { ticket: string; expiresAt: number } {
    const expiresAt = now + this.ttlMs;
    const claims = JSON.stringify({ did: identity.did, verified: identity.verified, exp: expiresAt });
    const body = `${TICKET_VERSION}.${Buffer.from(claims).toString('base64url')}`;
    return { ticket: `${body}.${this.sign(body)}`, expiresAt };
  }

  /** The identity a ticket stands for, or `undefined` when it is malformed, forged or expired. */
  verify(ticket: string, now: number): Identity | undefined {
    const [version, claims, signature, ...rest] = ticket.split('.');
    if (version !== TICKET_VERSION || claims === undefined || signature === undefined || rest.length > 0) return;
    const expected = Buffer.from(this.sign(`${version}.${claims}`));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return;
    try {
      const parsed = TicketClaimsSchema.safeParse(JSON.parse(Buffer.from(claims, 'base64url').toString('utf8')));
      if (!parsed.success || parsed.data.exp < now) return;
      return { did: parsed.data.did, verified: parsed.data.verified };
    } catch {
      return;
    }
  }

  private sign(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}
