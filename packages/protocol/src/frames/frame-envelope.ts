import { ErrorCode } from '../error-codes.js';
import { SERVER_FRAME_TYPES } from './frame-types.js';
import type { ServerFrame } from './server-frames.js';

export type DecodeFailure = {
  ok: false;
  code: typeof ErrorCode.BAD_FRAME | typeof ErrorCode.INVALID_FRAME | typeof ErrorCode.UNKNOWN_TYPE;
  message: string;
  /** The frame's `id` and `type`, when they could be read, so that the error can name the frame it answers. */
  refId?: string;
  refType?: string;
};
export type DecodeResult<Frame> = { ok: true; frame: Frame } | DecodeFailure;

/** A frame's text read as far as its envelope: a JSON object whose `type` is one of `knownTypes`. */
export function readEnvelope(text: string, knownTypes: readonly string[]): DecodeResult<Record<string, unknown>> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: ErrorCode.BAD_FRAME, message: 'frame is not valid JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, code: ErrorCode.BAD_FRAME, message: 'frame must be a JSON object' };
  }
  const envelope = value as Record<string, unknown>;
  const refs = frameReferences(envelope);
  if (typeof envelope.type !== 'string') {
    return { ok: false, code: ErrorCode.INVALID_FRAME, message: 'type: expected a string', ...refs };
  }
  if (!knownTypes.includes(envelope.type)) {
    return {
      ok: false,
      code: ErrorCode.UNKNOWN_TYPE,
      message: `unknown frame type ${JSON.stringify(envelope.type.slice(0, 64))}`,
      ...refs,
    };
  }
  return { ok: true, frame: envelope };
}

/** The `refId`/`refType` an error about the frame names. */
export function frameReferences(envelope: Record<string, unknown>): { refId?: string; refType?: string } {
  const refs: { refId?: string; refType?: string } = {};
  if (typeof envelope.id === 'string' && envelope.id.length <= 128) refs.refId = envelope.id;
  if (typeof envelope.type === 'string' && envelope.type.length <= 64) refs.refType = envelope.type;
  return refs;
}

/**
 * A server frame checked as far as its envelope only: a JSON object of a known server type with a numeric
 * `timestamp` and an object `payload`, whose fields are taken as the server sent them. This is what the browser
 * client uses instead of `decodeServerFrame`, to leave zod out of a page's bundle: it trusts the payload's shape to
 * the server it chose to connect to. The Node client validates every field.
 */
export function decodeServerFrameEnvelope(text: string): DecodeResult<ServerFrame> {
  const read = readEnvelope(text, SERVER_FRAME_TYPES);
  if (!read.ok) return read;
  const { timestamp, payload } = read.frame;
  const field =
    typeof timestamp !== 'number'
      ? 'timestamp: expected a number'
      : typeof payload !== 'object' || payload === null || Array.isArray(payload)
        ? 'payload: expected an object'
        : undefined;
  if (field) return { ok: false, code: ErrorCode.INVALID_FRAME, message: field, ...frameReferences(read.frame) };
  return { ok: true, frame: read.frame as ServerFrame };
}
