import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import {
  CLIENT_FRAME_TYPES,
  SERVER_FRAME_TYPES,
  decodeClientFrame,
  decodeServerFrame,
  frameJsonSchemas,
} from '@promethea/cpp-protocol';
import { clientSamples, emptySyncSample, seedClientFrames, serverSamples, variant } from '../support/sample-frames.js';

const schemas = frameJsonSchemas();
// Strict mode makes Ajv refuse any keyword it does not know, so the export must be plain draft 2020-12.
const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = {
  client: Object.fromEntries(Object.entries(schemas.client).map(([type, schema]) => [type, ajv.compile(schema)])),
  server: Object.fromEntries(Object.entries(schemas.server).map(([type, schema]) => [type, ajv.compile(schema)])),
};

function validate(side: 'client' | 'server', frame: { type: string }): boolean {
  const validator = validators[side][frame.type];
  if (!validator) throw new Error(`no ${side} schema for ${frame.type}`);
  return validator(frame);
}

describe('frameJsonSchemas', () => {
  it('exports one draft 2020-12 schema per frame type, client and server', () => {
    expect(Object.keys(schemas.client).sort()).toEqual([...CLIENT_FRAME_TYPES].sort());
    expect(Object.keys(schemas.server).sort()).toEqual([...SERVER_FRAME_TYPES].sort());
    for (const schema of [...Object.values(schemas.client), ...Object.values(schemas.server)]) {
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    }
  });

  it.each(CLIENT_FRAME_TYPES)('accepts the sample %s client frame', (type) => {
    expect(validate('client', clientSamples[type])).toBe(true);
  });

  it.each(SERVER_FRAME_TYPES)('accepts the sample %s server frame', (type) => {
    expect(validate('server', serverSamples[type])).toBe(true);
  });

  it('accepts the seed spec frames and the empty sync', () => {
    for (const frame of seedClientFrames) expect(validate('client', frame)).toBe(true);
    expect(validate('server', emptySyncSample)).toBe(true);
  });

  it('accepts unknown fields, as receivers ignore them', () => {
    const frame = variant(clientSamples.CPP_ANCHOR_HEAD, (copy) => {
      copy.extra = true;
      copy.payload.extra = 'x';
    });
    expect(validate('client', frame as { type: string })).toBe(true);
  });

  it('takes a prompt of files alone, as the decoder does', () => {
    for (const sample of [clientSamples.CPP_PROMPT, clientSamples.CPP_PIVOT_INIT]) {
      const frame = variant(sample, (copy) => {
        copy.payload.userPrompt = ' ';
        copy.payload.attachments = ['att_01JZ8Q7B1CX5D7E9F1G3H5J7KN'];
      });
      expect(validate('client', frame as { type: string })).toBe(true);
      expect(decodeClientFrame(JSON.stringify(frame)).ok).toBe(true);
    }
  });

  it("refuses a frame of another type under a type's schema", () => {
    expect(validators.client.CPP_PROMPT?.(clientSamples.CPP_PIVOT_INIT)).toBe(false);
    expect(validators.server.CPP_GRAPH_PATCH?.(serverSamples.CPP_SYNC_GRAPH)).toBe(false);
  });

  // Each invalid frame must be refused by the exported schema and by the runtime decoder alike.
  const invalidClientFrames: Array<[string, Record<string, unknown>]> = [
    ['no timestamp', variant(clientSamples.CPP_THREAD_LIST, (copy) => delete copy.timestamp)],
    ['a fractional timestamp', variant(clientSamples.CPP_THREAD_LIST, (copy) => (copy.timestamp = 0.5))],
    ['no payload', variant(clientSamples.CPP_SYNC_REQUEST, (copy) => delete copy.payload)],
    ['an empty id', variant(clientSamples.CPP_SYNC_REQUEST, (copy) => (copy.id = ''))],
    ['an id of 129 characters', variant(clientSamples.CPP_SYNC_REQUEST, (copy) => (copy.id = 'i'.repeat(129)))],
    [
      'a white-space-only prompt without attachments',
      variant(clientSamples.CPP_PROMPT, (copy) => {
        copy.payload.userPrompt = ' \n\t';
        delete copy.payload.attachments;
      }),
    ],
    [
      'an empty prompt without attachments',
      variant(clientSamples.CPP_PIVOT_INIT, (copy) => {
        copy.payload.userPrompt = '';
        delete copy.payload.attachments;
      }),
    ],
    [
      'a message id without its prefix',
      variant(clientSamples.CPP_PROMPT, (copy) => (copy.payload.newNodeId = '01h8v0')),
    ],
    [
      'a message id of 101 characters',
      variant(clientSamples.CPP_PIVOT_INIT, (copy) => (copy.payload.newBranchNodeId = `msg_${'a'.repeat(101)}`)),
    ],
    [
      'a message id with a space',
      variant(clientSamples.CPP_ANCHOR_HEAD, (copy) => (copy.payload.targetNodeId = 'msg_a b')),
    ],
    [
      'a thread id with a trailing newline',
      variant(clientSamples.CPP_THREAD_OPEN, (copy) => (copy.payload.threadId = 'thread_a\n')),
    ],
    [
      'a negative expectedVersion',
      variant(clientSamples.CPP_ANCHOR_HEAD, (copy) => (copy.payload.expectedVersion = -1)),
    ],
    [
      'a fractional receivedContentLength',
      variant(clientSamples.CPP_STREAM_STOP, (copy) => (copy.payload.receivedContentLength = 1.5)),
    ],
    ['patches as a string', variant(clientSamples.CPP_THREAD_OPEN, (copy) => (copy.payload.patches = 'true'))],
    ['no interruptedNodeId', variant(clientSamples.CPP_PIVOT_INIT, (copy) => delete copy.payload.interruptedNodeId)],
  ];

  it.each(invalidClientFrames)('refuses a client frame with %s, as the decoder does', (_, frame) => {
    expect(validate('client', frame as { type: string })).toBe(false);
    expect(decodeClientFrame(JSON.stringify(frame)).ok).toBe(false);
  });

  const invalidServerFrames: Array<[string, Record<string, unknown>]> = [
    [
      'a halt with an unknown reason',
      variant(serverSamples.CPP_STREAM_HALTED, (copy) => (copy.payload.reason = 'timeout')),
    ],
    ['a sync without title', variant(serverSamples.CPP_SYNC_GRAPH, (copy) => delete copy.payload.title)],
    [
      'a node with an unknown status',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => (copy.payload.nodes.msg_01h8v1.status = 'done')),
    ],
    [
      'a node without createdAt',
      variant(serverSamples.CPP_GRAPH_PATCH, (copy) => delete copy.payload.nodes.msg_01h8v1.createdAt),
    ],
    [
      'a root id that is not a message id',
      variant(serverSamples.CPP_GRAPH_PATCH, (copy) => (copy.payload.rootNodeId = 'root')),
    ],
    ['a chunk with a negative offset', variant(serverSamples.CPP_STREAM_CHUNK, (copy) => (copy.payload.offset = -1))],
    [
      'an unknown finish reason',
      variant(serverSamples.CPP_STREAM_COMPLETED, (copy) => (copy.payload.finishReason = 'eos')),
    ],
    [
      'a thread summary with a fractional version',
      variant(serverSamples.CPP_THREADS, (copy) => (copy.payload.threads[0].version = 1.5)),
    ],
    ['an unknown error code', variant(serverSamples.CPP_ERROR, (copy) => (copy.payload.code = 'TEAPOT'))],
  ];

  it.each(invalidServerFrames)('refuses a server frame with %s, as the decoder does', (_, frame) => {
    expect(validate('server', frame as { type: string })).toBe(false);
    expect(decodeServerFrame(JSON.stringify(frame)).ok).toBe(false);
  });
});
