import { z } from 'zod';

/** Milliseconds since the Unix epoch, as every frame carries. */
export const TimestampSchema = z.number().int().nonnegative();

/** A client-chosen correlation id, echoed as `refId` in any error about the frame. */
export const FrameIdSchema = z.string().min(1).max(128);

/** Builds a frame schema: `{type, timestamp, payload}` plus, for client frames, an optional `id`. */
export function clientFrame<Type extends string, Payload extends z.ZodType>(type: Type, payload: Payload) {
  return z.object({ type: z.literal(type), timestamp: TimestampSchema, id: FrameIdSchema.optional(), payload });
}

export function serverFrame<Type extends string, Payload extends z.ZodType>(type: Type, payload: Payload) {
  return z.object({ type: z.literal(type), timestamp: TimestampSchema, payload });
}
