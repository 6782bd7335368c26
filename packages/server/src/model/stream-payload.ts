import type { z } from 'zod';
import { malformedStream } from './upstream-failures.js';

/** Parses and checks one JSON payload of a stream (an SSE `data:` or an NDJSON line), or fails as malformed. */
export function parseStreamPayload<Schema extends z.ZodType>(text: string, schema: Schema, vendor: string, expected: string): z.output<Schema> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw malformedStream(vendor, `a payload that is not JSON where ${expected} was expected`, error);
  }
  const payload = schema.safeParse(json);
  if (!payload.success) throw malformedStream(vendor, `a payload that is not ${expected}`, payload.error);
  return payload.data;
}
