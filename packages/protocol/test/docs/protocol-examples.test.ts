import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  AttachmentSchema,
  CLIENT_FRAME_TYPES,
  MessageNodeSchema,
  SERVER_FRAME_TYPES,
  ThreadExportSchema,
  applyChunk,
  applyHalted,
  applyPatch,
  decodeClientFrame,
  decodeServerFrame,
  findInvariantViolations,
  graphFromSync,
  type ServerFrame,
  type ThreadGraph,
} from '@promethea/cpp-protocol';

// docs/PROTOCOL.md is normative: its examples must be frames this package accepts, and its session transcript
// must be one a client mirror can follow exactly.
const document = readFileSync(new URL('../../../../docs/PROTOCOL.md', import.meta.url), 'utf8');

function fencedBlocks(language: string): string[] {
  return [...document.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => match[1]!);
}

const isClientType = (type: unknown) => (CLIENT_FRAME_TYPES as readonly unknown[]).includes(type);

describe('docs/PROTOCOL.md examples', () => {
  const examples = fencedBlocks('json').map((text) => JSON.parse(text) as Record<string, unknown>);

  it('has an example of every frame', () => {
    const types = new Set(examples.map((example) => example.type).filter((type) => type !== undefined));
    expect([...types].sort()).toEqual([...CLIENT_FRAME_TYPES, ...SERVER_FRAME_TYPES].sort());
  });

  it('shows only frames and nodes that decode', () => {
    for (const example of examples) {
      if (!('type' in example)) {
        const schema =
          'format' in example ? ThreadExportSchema : 'sha256' in example ? AttachmentSchema : MessageNodeSchema;
        expect(schema.safeParse(example).success, JSON.stringify(example)).toBe(true);
        continue;
      }
      const decoded = isClientType(example.type)
        ? decodeClientFrame(JSON.stringify(example))
        : decodeServerFrame(JSON.stringify(example));
      expect(decoded, JSON.stringify(example)).toMatchObject({ ok: true });
    }
  });

  it('has a session transcript that a client mirror follows exactly', () => {
    const [transcript] = fencedBlocks('jsonl');
    const lines = transcript!.trim().split('\n');
    let mirror: ThreadGraph | undefined;
    let previousTimestamp = 0;
    const chunkStarts = new Map<string, number[]>();

    for (const line of lines) {
      const direction = line.slice(0, 2);
      const text = line.slice(2);
      const decoded = direction === '→ ' ? decodeClientFrame(text) : decodeServerFrame(text);
      if (!decoded.ok) throw new Error(`${decoded.message} in ${line}`);
      expect(decoded.frame.timestamp).toBeGreaterThanOrEqual(previousTimestamp);
      previousTimestamp = decoded.frame.timestamp;
      if (direction === '← ') mirror = follow(mirror, decoded.frame as ServerFrame, chunkStarts);
    }

    expect(mirror?.version).toBe(3);
    expect(Object.keys(mirror?.nodes ?? {})).toHaveLength(4);
  });
});

/** Applies one server frame of the transcript to the mirror, checking that it fits what came before. */
function follow(mirror: ThreadGraph | undefined, frame: ServerFrame, chunkStarts: Map<string, number[]>): ThreadGraph {
  if (frame.type === 'CPP_SYNC_GRAPH') return graphFromSync(frame.payload);
  if (!mirror) throw new Error(`${frame.type} before the first sync`);
  switch (frame.type) {
    case 'CPP_GRAPH_PATCH':
      expect(applyPatch(mirror, frame.payload)).toBe('applied');
      expect(findInvariantViolations(mirror)).toEqual([]);
      break;
    case 'CPP_STREAM_CHUNK':
      expect(applyChunk(mirror, frame.payload)).toBe('applied');
      chunkStarts.set(frame.payload.nodeId, [...(chunkStarts.get(frame.payload.nodeId) ?? []), frame.payload.offset]);
      break;
    case 'CPP_STREAM_HALTED': {
      const { interruptedNodeId, finalContentLength, lastChunkReceived } = frame.payload;
      const sent = mirror.nodes[interruptedNodeId]!.content;
      const lastStart =
        (chunkStarts.get(interruptedNodeId) ?? []).filter((start) => start < finalContentLength).at(-1) ?? 0;
      expect(lastChunkReceived).toBe(finalContentLength === 0 ? '' : sent.slice(lastStart, finalContentLength));
      expect(applyHalted(mirror, frame.payload)).toBe('applied');
      break;
    }
    case 'CPP_STREAM_COMPLETED':
      expect(mirror.nodes[frame.payload.nodeId]?.content.length).toBe(frame.payload.finalContentLength);
      break;
  }
  return mirror;
}
