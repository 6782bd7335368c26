import { describe, expect, it } from 'vitest';
import {
  CLIENT_FRAME_TYPES,
  MAX_FRAME_DEPTH,
  SERVER_FRAME_TYPES,
  decodeClientFrame,
  encodeClientFrame,
} from '@promethea/cpp-protocol';
import { clientSamples, seedClientFrames, variant } from '../support/sample-frames.js';

const decodeValue = (value: unknown) => decodeClientFrame(JSON.stringify(value));

describe('decodeClientFrame: valid frames', () => {
  it.each(CLIENT_FRAME_TYPES)('decodes %s and round-trips through encodeClientFrame', (type) => {
    const result = decodeClientFrame(encodeClientFrame(clientSamples[type]));
    expect(result).toEqual({ ok: true, frame: clientSamples[type] });
  });

  it.each(seedClientFrames)('decodes the seed spec frame $type as written', (frame) => {
    expect(decodeValue(frame)).toEqual({ ok: true, frame });
  });

  it('decodes every frame without its optional fields', () => {
    const minimal = [
      { type: 'CPP_THREAD_OPEN', timestamp: 0, payload: {} },
      {
        type: 'CPP_PROMPT',
        timestamp: 1,
        payload: { activeThreadId: 'thread_a', userPrompt: 'x', newNodeId: 'msg_a' },
      },
      { type: 'CPP_STREAM_STOP', timestamp: 1, payload: { activeThreadId: 'thread_a', nodeId: 'msg_a' } },
      { type: 'CPP_THREAD_LIST', timestamp: 1, payload: {} },
    ];
    for (const frame of minimal) expect(decodeValue(frame)).toEqual({ ok: true, frame });
  });

  it('ignores unknown fields at every level and does not pass them on', () => {
    const sample = clientSamples.CPP_PROMPT;
    const extended = { ...sample, extra: 1, payload: { ...sample.payload, futureField: { nested: true } } };
    expect(decodeValue(extended)).toEqual({ ok: true, frame: sample });
  });

  it('keeps a prompt exactly as sent, surrounding white space included', () => {
    const frame = variant(clientSamples.CPP_PROMPT, (copy) => (copy.payload.userPrompt = '  two words \n'));
    const result = decodeValue(frame);
    expect(result.ok && result.frame.type === 'CPP_PROMPT' && result.frame.payload.userPrompt).toBe('  two words \n');
  });
});

describe('decodeClientFrame: BAD_FRAME', () => {
  it.each(['', 'not json', '{"type":', "{'type':'CPP_THREAD_LIST'}"])('refuses text that is not JSON: %j', (text) => {
    expect(decodeClientFrame(text)).toEqual({ ok: false, code: 'BAD_FRAME', message: 'frame is not valid JSON' });
  });

  it.each(['[]', 'null', '42', '"CPP_THREAD_LIST"', 'true', '[{"type":"CPP_THREAD_LIST"}]'])(
    'refuses JSON that is not an object: %s',
    (text) => {
      expect(decodeClientFrame(text)).toEqual({ ok: false, code: 'BAD_FRAME', message: 'frame must be a JSON object' });
    },
  );
});

describe('decodeClientFrame: UNKNOWN_TYPE', () => {
  it('names the unknown type and echoes the id', () => {
    expect(decodeValue({ type: 'CPP_TELEPORT', timestamp: 1, id: 'r-9', payload: {} })).toEqual({
      ok: false,
      code: 'UNKNOWN_TYPE',
      message: 'unknown frame type "CPP_TELEPORT"',
      refId: 'r-9',
      refType: 'CPP_TELEPORT',
    });
  });

  it.each(SERVER_FRAME_TYPES)('refuses the server frame type %s from a client', (type) => {
    expect(decodeValue({ type, timestamp: 1, payload: {} })).toMatchObject({
      ok: false,
      code: 'UNKNOWN_TYPE',
      refType: type,
    });
  });

  it('is decided before the rest of the frame is looked at', () => {
    expect(decodeValue({ type: 'cpp_prompt' })).toMatchObject({
      ok: false,
      code: 'UNKNOWN_TYPE',
      refType: 'cpp_prompt',
    });
  });

  it('does not echo an overlong type or id, and shortens the type in the message', () => {
    const type = 'X'.repeat(65);
    const result = decodeValue({ type, timestamp: 1, id: 'i'.repeat(129), payload: {} });
    expect(result).toEqual({ ok: false, code: 'UNKNOWN_TYPE', message: `unknown frame type "${'X'.repeat(64)}"` });
  });
});

describe('decodeClientFrame: INVALID_FRAME', () => {
  it.each([
    ['a missing type', { timestamp: 1, payload: {} }, 'type: expected a string'],
    ['a type that is not a string', { type: 7, timestamp: 1, payload: {} }, 'type: expected a string'],
  ])('refuses %s', (_, frame, message) => {
    expect(decodeValue(frame)).toEqual({ ok: false, code: 'INVALID_FRAME', message });
  });

  // Each case breaks one field of a valid frame; the message must start with that field's path.
  const brokenFields: Array<[string, Record<string, unknown>, string]> = [
    ['missing timestamp', variant(clientSamples.CPP_THREAD_LIST, (copy) => delete copy.timestamp), 'timestamp'],
    ['fractional timestamp', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.timestamp = 1.5)), 'timestamp'],
    ['negative timestamp', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.timestamp = -1)), 'timestamp'],
    [
      'timestamp as a string',
      variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.timestamp = '1781100000000')),
      'timestamp',
    ],
    ['missing payload', variant(clientSamples.CPP_THREAD_LIST, (copy) => delete copy.payload), 'payload'],
    ['payload that is an array', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.payload = [])), 'payload'],
    ['empty id', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.id = '')), 'id'],
    [
      'missing newNodeId',
      variant(clientSamples.CPP_PROMPT, (copy) => delete copy.payload.newNodeId),
      'payload.newNodeId',
    ],
    [
      'missing userPrompt',
      variant(clientSamples.CPP_PIVOT_INIT, (copy) => delete copy.payload.userPrompt),
      'payload.userPrompt',
    ],
    [
      'missing targetNodeId',
      variant(clientSamples.CPP_ANCHOR_HEAD, (copy) => delete copy.payload.targetNodeId),
      'payload.targetNodeId',
    ],
    ['missing nodeId', variant(clientSamples.CPP_STREAM_STOP, (copy) => delete copy.payload.nodeId), 'payload.nodeId'],
    [
      'missing threadId',
      variant(clientSamples.CPP_SYNC_REQUEST, (copy) => delete copy.payload.threadId),
      'payload.threadId',
    ],
    [
      'expectedVersion as a string',
      variant(clientSamples.CPP_PROMPT, (copy) => (copy.payload.expectedVersion = '2')),
      'payload.expectedVersion',
    ],
    [
      'negative expectedVersion',
      variant(clientSamples.CPP_ANCHOR_HEAD, (copy) => (copy.payload.expectedVersion = -1)),
      'payload.expectedVersion',
    ],
    [
      'fractional receivedContentLength',
      variant(clientSamples.CPP_PIVOT_INIT, (copy) => (copy.payload.receivedContentLength = 2.5)),
      'payload.receivedContentLength',
    ],
    [
      'negative receivedContentLength',
      variant(clientSamples.CPP_STREAM_STOP, (copy) => (copy.payload.receivedContentLength = -3)),
      'payload.receivedContentLength',
    ],
    [
      'patches that is not a boolean',
      variant(clientSamples.CPP_THREAD_OPEN, (copy) => (copy.payload.patches = 'yes')),
      'payload.patches',
    ],
    [
      'userPrompt that is not a string',
      variant(clientSamples.CPP_PROMPT, (copy) => (copy.payload.userPrompt = ['hi'])),
      'payload.userPrompt',
    ],
    ['a list limit of 0', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.payload.limit = 0)), 'payload.limit'],
    [
      'a list limit above 200',
      variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.payload.limit = 201)),
      'payload.limit',
    ],
    ['an empty cursor', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.payload.cursor = '')), 'payload.cursor'],
    [
      'a cursor longer than 200',
      variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.payload.cursor = 'c'.repeat(201))),
      'payload.cursor',
    ],
    [
      'subscribe that is not a boolean',
      variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.payload.subscribe = 1)),
      'payload.subscribe',
    ],
  ];

  it.each(brokenFields)('refuses a frame with %s, naming %s and echoing the id', (_, frame, path) => {
    const result = decodeValue(frame);
    expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME', refType: frame.type });
    if (result.ok) return;
    expect(result.message.startsWith(`${path}: `)).toBe(true);
    if (typeof frame.id === 'string' && frame.id !== '') expect(result.refId).toBe(frame.id);
  });

  it('does not echo an id that is not a string, and names it', () => {
    const result = decodeValue(variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.id = 42)));
    expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME', refType: 'CPP_THREAD_LIST' });
    expect(result).not.toHaveProperty('refId');
    expect(!result.ok && result.message).toMatch(/^id: /);
  });

  it('does not echo an id longer than 128 characters', () => {
    const result = decodeValue(variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.id = 'i'.repeat(129))));
    expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME' });
    expect(result).not.toHaveProperty('refId');
    expect(decodeValue(variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.id = 'i'.repeat(128)))).ok).toBe(true);
  });
});

describe('decodeClientFrame: ids', () => {
  const messageIdFields: Array<[keyof typeof clientSamples, string]> = [
    ['CPP_PIVOT_INIT', 'interruptedNodeId'],
    ['CPP_PIVOT_INIT', 'newBranchNodeId'],
    ['CPP_ANCHOR_HEAD', 'targetNodeId'],
    ['CPP_PROMPT', 'newNodeId'],
    ['CPP_PROMPT', 'parentNodeId'],
    ['CPP_STREAM_STOP', 'nodeId'],
  ];
  const threadIdFields: Array<[keyof typeof clientSamples, string]> = [
    ['CPP_PIVOT_INIT', 'activeThreadId'],
    ['CPP_ANCHOR_HEAD', 'activeThreadId'],
    ['CPP_THREAD_OPEN', 'threadId'],
    ['CPP_THREAD_CLOSE', 'threadId'],
    ['CPP_PROMPT', 'activeThreadId'],
    ['CPP_STREAM_STOP', 'activeThreadId'],
    ['CPP_SYNC_REQUEST', 'threadId'],
  ];
  const badMessageIds = [
    'msg_',
    'msg_a b',
    'msg_a.b',
    'msg_é',
    `msg_${'a'.repeat(101)}`,
    'MSG_a',
    'thread_a',
    'msg_a\n',
    'a',
    7,
  ];
  const badThreadIds = ['thread_', 'thread_a/b', `thread_${'a'.repeat(101)}`, 'msg_a', 'thread_a\n', null];

  for (const [type, field] of messageIdFields) {
    it.each(badMessageIds)(`refuses ${type}.${field} = %j`, (bad) => {
      const result = decodeValue(variant(clientSamples[type], (copy) => (copy.payload[field] = bad)));
      expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME' });
      expect(!result.ok && result.message).toMatch(new RegExp(`^payload\\.${field}: `));
    });
  }

  for (const [type, field] of threadIdFields) {
    it.each(badThreadIds)(`refuses ${type}.${field} = %j`, (bad) => {
      const result = decodeValue(variant(clientSamples[type], (copy) => (copy.payload[field] = bad)));
      expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME' });
      expect(!result.ok && result.message).toMatch(new RegExp(`^payload\\.${field}: `));
    });
  }

  it('accepts ids at the longest allowed length and with every allowed character', () => {
    const frame = variant(clientSamples.CPP_PROMPT, (copy) => {
      copy.payload.newNodeId = `msg_${'a'.repeat(100)}`;
      copy.payload.parentNodeId = 'msg_AZaz09_-';
      copy.payload.activeThreadId = `thread_${'Z'.repeat(100)}`;
    });
    expect(decodeValue(frame).ok).toBe(true);
  });
});

describe('decodeClientFrame: prompts', () => {
  it.each(['', ' ', '\n\t  ', '\u00a0', '\u2003\r\n'])(
    'refuses the white-space-only prompt %j without attachments in CPP_PROMPT and CPP_PIVOT_INIT',
    (prompt) => {
      for (const sample of [clientSamples.CPP_PROMPT, clientSamples.CPP_PIVOT_INIT]) {
        const result = decodeValue(
          variant(sample, (copy) => {
            copy.payload.userPrompt = prompt;
            delete copy.payload.attachments;
          }),
        );
        expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME', refId: sample.id, refType: sample.type });
        expect(!result.ok && result.message).toMatch(/^payload\.userPrompt: /);
      }
    },
  );

  it.each(['', ' ', '\n\t  '])('takes the prompt %j of files alone in CPP_PROMPT and CPP_PIVOT_INIT', (prompt) => {
    for (const sample of [clientSamples.CPP_PROMPT, clientSamples.CPP_PIVOT_INIT]) {
      const frame = variant(sample, (copy) => {
        copy.payload.userPrompt = prompt;
        copy.payload.attachments = ['att_01JZ8Q7B1CX5D7E9F1G3H5J7KN'];
      });
      expect(decodeValue(frame)).toMatchObject({ ok: true });
    }
  });
});

describe('decodeClientFrame: surrogates in prompts', () => {
  it.each(['\ud83d', 'a\ude80b', '\ude80\ud83d'])(
    'refuses the lone surrogate of %j with INVALID_FRAME, and takes a pair',
    (prompt) => {
      for (const sample of [clientSamples.CPP_PROMPT, clientSamples.CPP_PIVOT_INIT]) {
        const result = decodeValue(variant(sample, (copy) => (copy.payload.userPrompt = prompt)));
        expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME', refId: sample.id });
        expect(!result.ok && result.message).toMatch(/^payload\.userPrompt: .*lone surrogate/);
        expect(decodeValue(variant(sample, (copy) => (copy.payload.userPrompt = 'to the 🚀')))).toMatchObject({
          ok: true,
        });
      }
    },
  );
});

describe('decodeClientFrame: nesting', () => {
  it(`refuses with BAD_FRAME, before parsing it, a frame nesting deeper than ${MAX_FRAME_DEPTH} levels`, () => {
    const deep = (depth: number) =>
      `{"type":"CPP_THREAD_LIST","timestamp":1,"payload":{},"extra":${'['.repeat(depth - 1)}${']'.repeat(depth - 1)}}`;
    expect(decodeClientFrame(deep(MAX_FRAME_DEPTH))).toMatchObject({ ok: true });
    expect(decodeClientFrame(deep(MAX_FRAME_DEPTH + 1))).toEqual({
      ok: false,
      code: 'BAD_FRAME',
      message: `frame nests arrays and objects deeper than ${MAX_FRAME_DEPTH} levels`,
    });
    // A megabyte of it, which JSON.parse would have turned into half a million arrays.
    expect(decodeClientFrame(deep(512 * 1024))).toMatchObject({ ok: false, code: 'BAD_FRAME' });
  });

  it('counts no bracket inside a string, escaped quotes included', () => {
    const userPrompt = `[[[{{{ \\" ]]] " ${'['.repeat(100)}`;
    const frame = {
      type: 'CPP_PROMPT',
      timestamp: 1,
      payload: { activeThreadId: 'thread_a', userPrompt, newNodeId: 'msg_a' },
    };
    expect(decodeValue(frame)).toEqual({ ok: true, frame });
  });
});
