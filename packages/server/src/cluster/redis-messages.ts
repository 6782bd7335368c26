import { ERROR_CODES, type ErrorCode } from '@promethea/cpp-protocol';
import { z } from 'zod';
import type { CommandReply, ForwardedCommand, ThreadMessage } from './cluster-transport.js';

/**
 * What instances write to each other through Redis, checked when read: another version of the server, or anything
 * else writing under the prefix, must not be able to feed an instance values of the wrong shape.
 */
const PublishedSchema = z.union([
  z.object({ origin: z.string(), frame: z.string(), title: z.string().optional() }),
  z.object({
    origin: z.string(),
    presence: z.object({
      instance: z.string(),
      present: z.array(z.object({ did: z.string(), typing: z.boolean() })),
      ask: z.boolean(),
    }),
  }),
]);

const IdentitySchema = z.object({ did: z.string(), verified: z.boolean() });

const CommandSchema = z.object({ threadId: z.string(), frame: z.string(), identity: IdentitySchema.optional() });

const ReplySchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), retried: z.boolean(), version: z.number().int().nonnegative() }),
  z.object({ ok: z.literal(false), code: z.enum(ERROR_CODES as [ErrorCode, ...ErrorCode[]]), message: z.string() }),
]);

/** With the instance that published it, so that it can ignore its own. */
export type Published = ThreadMessage & { origin: string };

export function encodePublished(origin: string, message: ThreadMessage): string {
  return JSON.stringify({ origin, ...message });
}

export function decodePublished(text: string): Published {
  return PublishedSchema.parse(JSON.parse(text));
}

export function decodeCommand(text: string): ForwardedCommand {
  return CommandSchema.parse(JSON.parse(text));
}

export function decodeReply(text: string): CommandReply {
  return ReplySchema.parse(JSON.parse(text));
}
