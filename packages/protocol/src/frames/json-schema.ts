import { z } from 'zod';
import { ClientFrameSchema } from './client-frames.js';
import { ServerFrameSchema } from './server-frames.js';

export type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema (draft 2020-12) of every frame, keyed by frame type and generated from the runtime schemas so that
 * the two never drift. Input form: unknown fields are allowed, since receivers ignore them and later versions may
 * add fields.
 */
export function frameJsonSchemas(): { client: Record<string, JsonSchema>; server: Record<string, JsonSchema> } {
  return { client: mapSchemas(ClientFrameSchema.options), server: mapSchemas(ServerFrameSchema.options) };
}

function mapSchemas(options: readonly z.ZodObject<{ type: z.ZodLiteral<string> }>[]): Record<string, JsonSchema> {
  return Object.fromEntries(
    options.map((schema) => [
      schema.shape.type.value,
      z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema,
    ]),
  );
}
