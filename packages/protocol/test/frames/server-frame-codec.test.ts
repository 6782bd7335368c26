import { describe, expect, it } from 'vitest';
import { CLIENT_FRAME_TYPES, SERVER_FRAME_TYPES, decodeServerFrame, encodeServerFrame } from '@promethea/cpp-protocol';
import { emptySyncSample, serverSamples, variant } from '../support/sample-frames.js';

const decodeValue = (value: unknown) => decodeServerFrame(JSON.stringify(value));

describe('decodeServerFrame', () => {
  it.each(SERVER_FRAME_TYPES)('decodes %s as encodeServerFrame writes it', (type) => {
    const sample = serverSamples[type];
    const text = encodeServerFrame(type, sample.payload, sample.timestamp);
    expect(JSON.parse(text)).toEqual(sample);
    expect(decodeServerFrame(text)).toEqual({ ok: true, frame: sample });
  });

  it('decodes the sync of an empty thread', () => {
    expect(decodeValue(emptySyncSample)).toEqual({ ok: true, frame: emptySyncSample });
  });

  it('stamps frames with the current time in integer milliseconds by default', () => {
    const before = Date.now();
    const frame = JSON.parse(encodeServerFrame('CPP_THREADS', { threads: [], nextCursor: null }));
    const after = Date.now();
    expect(Number.isInteger(frame.timestamp)).toBe(true);
    expect(frame.timestamp).toBeGreaterThanOrEqual(before);
    expect(frame.timestamp).toBeLessThanOrEqual(after);
  });

  it('ignores unknown fields, in nodes as well, so that later servers may add some', () => {
    const sample = serverSamples.CPP_SYNC_GRAPH;
    const extended = variant(sample, (copy) => {
      copy.serverVersion = '2';
      copy.payload.cursor = 'abc';
      copy.payload.nodes.msg_01h8v0.annotations = [];
    });
    expect(decodeValue(extended)).toEqual({ ok: true, frame: sample });
  });

  it('refuses text that is not a JSON object with BAD_FRAME', () => {
    expect(decodeServerFrame('<html>')).toMatchObject({ ok: false, code: 'BAD_FRAME' });
    expect(decodeServerFrame('[]')).toMatchObject({ ok: false, code: 'BAD_FRAME' });
  });

  it.each(CLIENT_FRAME_TYPES)('refuses the client frame type %s with UNKNOWN_TYPE', (type) => {
    expect(decodeValue({ type, timestamp: 1, payload: {} })).toMatchObject({
      ok: false,
      code: 'UNKNOWN_TYPE',
      refType: type,
    });
  });

  const brokenFrames: Array<[string, Record<string, unknown>, string]> = [
    [
      'a halt without its reason',
      variant(serverSamples.CPP_STREAM_HALTED, (copy) => delete copy.payload.reason),
      'payload.reason',
    ],
    [
      'a halt with an unknown reason',
      variant(serverSamples.CPP_STREAM_HALTED, (copy) => (copy.payload.reason = 'timeout')),
      'payload.reason',
    ],
    [
      'a halt without lastChunkReceived',
      variant(serverSamples.CPP_STREAM_HALTED, (copy) => delete copy.payload.lastChunkReceived),
      'payload.lastChunkReceived',
    ],
    [
      'a sync without version',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => delete copy.payload.version),
      'payload.version',
    ],
    [
      'a sync without title',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => delete copy.payload.title),
      'payload.title',
    ],
    [
      'a node without createdAt',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => delete copy.payload.nodes.msg_01h8v0.createdAt),
      'payload.nodes.msg_01h8v0.createdAt',
    ],
    [
      'a node without status',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => delete copy.payload.nodes.msg_01h8v0.status),
      'payload.nodes.msg_01h8v0.status',
    ],
    [
      'a node with an unknown status',
      variant(serverSamples.CPP_GRAPH_PATCH, (copy) => (copy.payload.nodes.msg_01h8v1.status = 'paused')),
      'payload.nodes.msg_01h8v1.status',
    ],
    [
      'a node with an unknown role',
      variant(serverSamples.CPP_GRAPH_PATCH, (copy) => (copy.payload.nodes.msg_01h8v1.role = 'system')),
      'payload.nodes.msg_01h8v1.role',
    ],
    [
      'a node with a bad child id',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => (copy.payload.nodes.msg_01h8v0.childrenIds = ['x'])),
      'payload.nodes.msg_01h8v0.childrenIds.0',
    ],
    [
      'negative usage',
      variant(serverSamples.CPP_SYNC_GRAPH, (copy) => (copy.payload.nodes.msg_01h8v1.usage.outputTokens = -1)),
      'payload.nodes.msg_01h8v1.usage.outputTokens',
    ],
    [
      'a patch without version',
      variant(serverSamples.CPP_GRAPH_PATCH, (copy) => delete copy.payload.version),
      'payload.version',
    ],
    [
      'a chunk with a negative offset',
      variant(serverSamples.CPP_STREAM_CHUNK, (copy) => (copy.payload.offset = -1)),
      'payload.offset',
    ],
    [
      'a chunk without delta',
      variant(serverSamples.CPP_STREAM_CHUNK, (copy) => delete copy.payload.delta),
      'payload.delta',
    ],
    [
      'a completion with an unknown finish reason',
      variant(serverSamples.CPP_STREAM_COMPLETED, (copy) => (copy.payload.finishReason = 'done')),
      'payload.finishReason',
    ],
    [
      'a thread summary without nodeCount',
      variant(serverSamples.CPP_THREADS, (copy) => delete copy.payload.threads[0].nodeCount),
      'payload.threads.0.nodeCount',
    ],
    [
      'an error with an unknown code',
      variant(serverSamples.CPP_ERROR, (copy) => (copy.payload.code = 'OOPS')),
      'payload.code',
    ],
    [
      'an error without message',
      variant(serverSamples.CPP_ERROR, (copy) => delete copy.payload.message),
      'payload.message',
    ],
    [
      'an error naming a bad thread id',
      variant(serverSamples.CPP_ERROR, (copy) => (copy.payload.threadId = 'abc')),
      'payload.threadId',
    ],
  ];

  it.each(brokenFrames)('refuses %s with INVALID_FRAME naming %s', (_, frame, path) => {
    const result = decodeValue(frame);
    expect(result).toMatchObject({ ok: false, code: 'INVALID_FRAME', refType: frame.type });
    expect(!result.ok && result.message.startsWith(`${path}: `)).toBe(true);
  });
});
