import type { z } from 'zod';
import { ErrorCode } from '../error-codes.js';
import { ClientFrameSchema, type ClientFrame } from './client-frames.js';
import { frameReferences, readEnvelope, type DecodeResult } from './frame-envelope.js';
import { CLIENT_FRAME_TYPES, SERVER_FRAME_TYPES } from './frame-types.js';
import { ServerFrameSchema, type ServerFrame, type ServerFrameType, type ServerPayload } from './server-frames.js';

/** The one place where a client frame's text becomes a value: JSON, then the envelope, then the frame's schema. */
export function decodeClientFrame(text: string): DecodeResult<ClientFrame> {
  if (nestsDeeperThan(text, MAX_FRAME_DEPTH)) {
    return {
      ok: false,
      code: ErrorCode.BAD_FRAME,
      message: `frame nests arrays and objects deeper than ${MAX_FRAME_DEPTH} levels`,
    };
  }
  return decodeFrame(text, ClientFrameSchema, CLIENT_FRAME_TYPES);
}

/**
 * How deep a client frame's arrays and objects may nest (no CPP frame needs more than 4). Parsing a megabyte of
 * nested arrays took 170 ms of the event loop before its frame could be refused; counting brackets first takes
 * about one.
 */
export const MAX_FRAME_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const [OPEN_ARRAY, CLOSE_ARRAY, OPEN_OBJECT, CLOSE_OBJECT] = [0x5b, 0x5d, 0x7b, 0x7d];

/** Whether the JSON text opens more than `limit` arrays or objects inside one another (strings are skipped). */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      depth += 1;
      if (depth > limit) return true;
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) depth -= 1;
  }
  return false;
}

/** The client SDK's edge: servers are validated as strictly as clients. */
export function decodeServerFrame(text: string): DecodeResult<ServerFrame> {
  return decodeFrame(text, ServerFrameSchema, SERVER_FRAME_TYPES);
}

export function encodeServerFrame<Type extends ServerFrameType>(
  type: Type,
  payload: ServerPayload<Type>,
  timestamp = Date.now(),
): string {
  return JSON.stringify({ type, timestamp, payload });
}

export function encodeClientFrame(frame: ClientFrame): string {
  return JSON.stringify(frame);
}

function decodeFrame<Frame>(
  text: string,
  schema: z.ZodType<Frame>,
  knownTypes: readonly string[],
): DecodeResult<Frame> {
  const read = readEnvelope(text, knownTypes);
  if (!read.ok) return read;
  const parsed = schema.safeParse(read.frame);
  if (!parsed.success)
    return {
      ok: false,
      code: ErrorCode.INVALID_FRAME,
      message: describeIssue(parsed.error),
      ...frameReferences(read.frame),
    };
  return { ok: true, frame: parsed.data };
}

function describeIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'frame does not match its schema';
  const path = issue.path.map(String).join('.') || '(frame)';
  return `${path}: ${issue.message}`;
}
