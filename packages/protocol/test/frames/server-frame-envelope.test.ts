import { describe, expect, it } from 'vitest';
import {
  ClientFrameSchema,
  CLIENT_FRAME_TYPES,
  SERVER_FRAME_TYPES,
  ServerFrameSchema,
  decodeServerFrameEnvelope,
  encodeServerFrame,
} from '@promethea/cpp-protocol';
import { serverSamples, variant } from '../support/sample-frames.js';

describe('the frame type lists', () => {
  it('name every frame type the schemas define, and no other', () => {
    expect([...SERVER_FRAME_TYPES].sort()).toEqual(
      ServerFrameSchema.options.map((option) => option.shape.type.value).sort(),
    );
    expect([...CLIENT_FRAME_TYPES].sort()).toEqual(
      ClientFrameSchema.options.map((option) => option.shape.type.value).sort(),
    );
  });
});

describe('decodeServerFrameEnvelope (the browser client, without zod)', () => {
  it.each(SERVER_FRAME_TYPES)('decodes %s as encodeServerFrame writes it', (type) => {
    const sample = serverSamples[type];
    expect(decodeServerFrameEnvelope(encodeServerFrame(type, sample.payload, sample.timestamp))).toEqual({
      ok: true,
      frame: sample,
    });
  });

  it('refuses what is not a JSON object with BAD_FRAME, and an unknown type with UNKNOWN_TYPE', () => {
    expect(decodeServerFrameEnvelope('<html>')).toMatchObject({ ok: false, code: 'BAD_FRAME' });
    expect(decodeServerFrameEnvelope('[]')).toMatchObject({ ok: false, code: 'BAD_FRAME' });
    expect(decodeServerFrameEnvelope('{"type":"CPP_PROMPT","timestamp":1,"payload":{}}')).toMatchObject({
      ok: false,
      code: 'UNKNOWN_TYPE',
      refType: 'CPP_PROMPT',
    });
    expect(decodeServerFrameEnvelope('{"timestamp":1,"payload":{}}')).toMatchObject({
      ok: false,
      code: 'INVALID_FRAME',
      message: 'type: expected a string',
    });
  });

  it('refuses a frame without a numeric timestamp or an object payload with INVALID_FRAME', () => {
    const chunk = serverSamples.CPP_STREAM_CHUNK;
    const cases = [
      [variant(chunk, (copy) => delete copy.timestamp), 'timestamp: expected a number'],
      [variant(chunk, (copy) => (copy.payload = null)), 'payload: expected an object'],
      [variant(chunk, (copy) => (copy.payload = ['x'])), 'payload: expected an object'],
    ] as const;
    for (const [frame, message] of cases) {
      expect(decodeServerFrameEnvelope(JSON.stringify(frame))).toEqual({
        ok: false,
        code: 'INVALID_FRAME',
        message,
        refType: 'CPP_STREAM_CHUNK',
      });
    }
  });

  it('takes the payload as the server sent it: its fields are not checked (the Node client checks them)', () => {
    const odd = variant(serverSamples.CPP_STREAM_CHUNK, (copy) => (copy.payload.offset = -1));
    expect(decodeServerFrameEnvelope(JSON.stringify(odd))).toEqual({ ok: true, frame: odd });
  });
});
