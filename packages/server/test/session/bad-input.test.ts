import { once } from 'node:events';
import {
  ErrorCode,
  findInvariantViolations,
  graphFromSync,
  newMessageId,
  newThreadId,
  type ErrorFrame,
} from '@promethea/cpp-protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  completion,
  expectError,
  listThreads,
  openThread,
  prompt,
  requestSync,
  type SyncPayload,
} from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const MAX_FRAME_BYTES = 4096;
const fixture = useServer();

/** Two threads with one finished exchange each: ids of the other thread must be as unknown as made-up ones. */
interface World {
  client: RawClient;
  threadId: string;
  user: string;
  assistant: string;
  otherUser: string;
  otherAssistant: string;
  before: SyncPayload;
}

let world: World;

async function threadWithExchange(client: RawClient): Promise<{ threadId: string; user: string; assistant: string }> {
  const { threadId } = await openThread(client, { patches: true });
  const exchange = await prompt(client, threadId, 'Hello?');
  await completion(client, threadId, exchange.assistantNodeId);
  return { threadId, user: exchange.userNodeId, assistant: exchange.assistantNodeId };
}

beforeEach(async () => {
  await fixture.start({
    maxFrameBytes: MAX_FRAME_BYTES,
    model: new ScriptedModel({ chunks: ['Hello', ' there'] }, { gated: false }),
  });
  const client = await fixture.connect();
  const other = await threadWithExchange(client);
  const { threadId, user, assistant } = await threadWithExchange(client);
  world = {
    client,
    threadId,
    user,
    assistant,
    otherUser: other.user,
    otherAssistant: other.assistant,
    before: await requestSync(client, threadId),
  };
});

/** After a refused frame the connection still works, and the thread is exactly as it was and sound. */
async function expectNothingChanged(): Promise<void> {
  const after = await requestSync(world.client, world.threadId);
  expect(after).toEqual(world.before);
  expect(findInvariantViolations(graphFromSync(after))).toEqual([]);
  expect((await listThreads(world.client)).length).toBe(2);
}

function frame(type: string, payload: unknown, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ type, timestamp: Date.now(), payload, ...extra });
}

interface BadInput {
  name: string;
  send(world: World): string | Buffer;
  error: Partial<ErrorFrame['payload']> & { code: ErrorCode };
  /** Part of the error message: the path of the offending field. */
  mentions?: string;
}

const promptPayload = (world: World, fields: Record<string, unknown> = {}) => ({
  activeThreadId: world.threadId,
  userPrompt: 'More please',
  newNodeId: newMessageId(),
  ...fields,
});

const malformed: BadInput[] = [
  { name: 'text that is not JSON', send: () => '{"type": "CPP_PROMPT", ', error: { code: ErrorCode.BAD_FRAME } },
  { name: 'a JSON array', send: () => '[1, 2]', error: { code: ErrorCode.BAD_FRAME } },
  { name: 'a JSON string', send: () => '"CPP_PROMPT"', error: { code: ErrorCode.BAD_FRAME } },
  { name: 'JSON null', send: () => 'null', error: { code: ErrorCode.BAD_FRAME } },
  {
    name: 'a binary frame, even holding a valid frame',
    send: (w) => Buffer.from(frame('CPP_PROMPT', promptPayload(w))),
    error: { code: ErrorCode.BAD_FRAME },
  },
  {
    name: 'an unknown type',
    send: () => frame('CPP_TELEPORT', {}, { id: 'frame-1' }),
    error: { code: ErrorCode.UNKNOWN_TYPE, refType: 'CPP_TELEPORT', refId: 'frame-1' },
  },
  {
    name: 'no type',
    send: () => JSON.stringify({ timestamp: Date.now(), payload: {}, id: 'frame-2' }),
    error: { code: ErrorCode.INVALID_FRAME, refId: 'frame-2' },
    mentions: 'type',
  },
  {
    name: 'no timestamp',
    send: (w) => JSON.stringify({ type: 'CPP_PROMPT', payload: promptPayload(w), id: 'frame-3' }),
    error: { code: ErrorCode.INVALID_FRAME, refId: 'frame-3', refType: 'CPP_PROMPT' },
    mentions: 'timestamp',
  },
  {
    name: 'a timestamp that is not integer milliseconds',
    send: (w) => frame('CPP_PROMPT', promptPayload(w), { timestamp: '2024-01-01T00:00:00Z' }),
    error: { code: ErrorCode.INVALID_FRAME, refType: 'CPP_PROMPT' },
    mentions: 'timestamp',
  },
  {
    name: 'no payload',
    send: () => JSON.stringify({ type: 'CPP_THREAD_LIST', timestamp: Date.now() }),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'payload',
  },
  {
    name: 'a missing field',
    send: (w) => frame('CPP_PROMPT', { activeThreadId: w.threadId, newNodeId: newMessageId() }, { id: 'frame-4' }),
    error: { code: ErrorCode.INVALID_FRAME, refId: 'frame-4', refType: 'CPP_PROMPT' },
    mentions: 'payload.userPrompt',
  },
  {
    name: 'a mistyped field',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { userPrompt: 42 }), { id: 'frame-5' }),
    error: { code: ErrorCode.INVALID_FRAME, refId: 'frame-5' },
    mentions: 'payload.userPrompt',
  },
  {
    name: 'a prompt of white space only',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { userPrompt: ' \n\t' })),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'payload.userPrompt',
  },
  {
    name: 'a node id without the msg_ prefix',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { newNodeId: 'node-1' })),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'payload.newNodeId',
  },
  {
    name: 'a node id with a forbidden character',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { newNodeId: 'msg_a.b' })),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'payload.newNodeId',
  },
  {
    name: 'a thread id without the thread_ prefix',
    send: (w) => frame('CPP_SYNC_REQUEST', { threadId: w.threadId.slice('thread_'.length) }),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'payload.threadId',
  },
  {
    name: 'a fractional expectedVersion',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { expectedVersion: 1.5 })),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'payload.expectedVersion',
  },
  {
    name: 'a negative receivedContentLength',
    send: (w) =>
      frame('CPP_PIVOT_INIT', {
        interruptedNodeId: w.assistant,
        activeThreadId: w.threadId,
        userPrompt: 'x',
        newBranchNodeId: newMessageId(),
        receivedContentLength: -1,
      }),
    error: { code: ErrorCode.INVALID_FRAME, refType: 'CPP_PIVOT_INIT' },
    mentions: 'payload.receivedContentLength',
  },
  {
    name: 'a frame id longer than 128 characters',
    send: (w) => frame('CPP_SYNC_REQUEST', { threadId: w.threadId }, { id: 'x'.repeat(129) }),
    error: { code: ErrorCode.INVALID_FRAME },
    mentions: 'id',
  },
  {
    name: 'a frame over maxFrameBytes, even a valid one',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { userPrompt: 'x'.repeat(MAX_FRAME_BYTES) })),
    error: { code: ErrorCode.FRAME_TOO_LARGE },
  },
];

const unknownThread = newThreadId();
const unknownNode = newMessageId();

const unknownIds: BadInput[] = [
  {
    name: 'CPP_PROMPT to an unknown thread',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { activeThreadId: unknownThread }), { id: 'p' }),
    error: { code: ErrorCode.NOT_FOUND, refId: 'p', refType: 'CPP_PROMPT' },
  },
  {
    name: 'CPP_PIVOT_INIT in an unknown thread',
    send: (w) =>
      frame('CPP_PIVOT_INIT', {
        interruptedNodeId: w.assistant,
        activeThreadId: unknownThread,
        userPrompt: 'x',
        newBranchNodeId: newMessageId(),
      }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_PIVOT_INIT' },
  },
  {
    name: 'CPP_ANCHOR_HEAD in an unknown thread',
    send: (w) => frame('CPP_ANCHOR_HEAD', { activeThreadId: unknownThread, targetNodeId: w.user }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_ANCHOR_HEAD' },
  },
  {
    name: 'CPP_STREAM_STOP in an unknown thread',
    send: (w) => frame('CPP_STREAM_STOP', { activeThreadId: unknownThread, nodeId: w.assistant }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_STREAM_STOP' },
  },
  {
    name: 'CPP_SYNC_REQUEST of an unknown thread',
    send: () => frame('CPP_SYNC_REQUEST', { threadId: unknownThread }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_SYNC_REQUEST' },
  },
  {
    name: 'CPP_THREAD_CLOSE of an unknown thread',
    send: () => frame('CPP_THREAD_CLOSE', { threadId: unknownThread }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_THREAD_CLOSE' },
  },
  {
    name: 'a parentNodeId that does not exist',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { parentNodeId: unknownNode })),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_PROMPT' },
  },
  {
    name: 'a parentNodeId of another thread',
    send: (w) => frame('CPP_PROMPT', promptPayload(w, { parentNodeId: w.otherAssistant })),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_PROMPT' },
  },
  {
    name: 'an interruptedNodeId that does not exist',
    send: (w) =>
      frame('CPP_PIVOT_INIT', {
        interruptedNodeId: unknownNode,
        activeThreadId: w.threadId,
        userPrompt: 'x',
        newBranchNodeId: newMessageId(),
      }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_PIVOT_INIT' },
  },
  {
    name: 'an interruptedNodeId of another thread',
    send: (w) =>
      frame('CPP_PIVOT_INIT', {
        interruptedNodeId: w.otherAssistant,
        activeThreadId: w.threadId,
        userPrompt: 'x',
        newBranchNodeId: newMessageId(),
      }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_PIVOT_INIT' },
  },
  {
    name: 'an anchor target that does not exist',
    send: (w) => frame('CPP_ANCHOR_HEAD', { activeThreadId: w.threadId, targetNodeId: unknownNode }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_ANCHOR_HEAD' },
  },
  {
    name: 'an anchor target of another thread',
    send: (w) => frame('CPP_ANCHOR_HEAD', { activeThreadId: w.threadId, targetNodeId: w.otherUser }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_ANCHOR_HEAD' },
  },
  {
    name: 'a stop of a node that does not exist',
    send: (w) => frame('CPP_STREAM_STOP', { activeThreadId: w.threadId, nodeId: unknownNode }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_STREAM_STOP' },
  },
  {
    name: 'a stop of a node of another thread',
    send: (w) => frame('CPP_STREAM_STOP', { activeThreadId: w.threadId, nodeId: w.otherAssistant }),
    error: { code: ErrorCode.NOT_FOUND, refType: 'CPP_STREAM_STOP' },
  },
];

function refusalCases(title: string, cases: BadInput[]): void {
  describe(title, () => {
    for (const input of cases) {
      it(`answers ${input.name} with ${input.error.code}, and changes nothing`, async () => {
        // As sent, before the schema strips what it does not know: only the error's own fields.
        const raw = once(world.client.socket, 'message').then(
          ([data]) => JSON.parse(String(data)) as { payload: object },
        );
        world.client.sendRaw(input.send(world));
        const error = await expectError(world.client, input.error.code, input.error);
        for (const key of Object.keys((await raw).payload))
          expect(['code', 'message', 'refId', 'refType']).toContain(key);
        if (input.error.refId === undefined) expect(error.refId).toBeUndefined();
        if (input.mentions) expect(error.message).toContain(input.mentions);
        await expectNothingChanged();
      });
    }
  });
}

refusalCases('malformed frames', malformed);
refusalCases('ids that are unknown or of another thread', unknownIds);

describe('frames the server accepts', () => {
  it('ignores unknown fields in the envelope and the payload', async () => {
    const newNodeId = newMessageId();
    world.client.sendRaw(
      frame('CPP_PROMPT', { ...promptPayload(world, { newNodeId }), mood: 'curious' }, { trace: 'abc' }),
    );
    const sync = await requestSync(world.client, world.threadId);
    expect(sync.nodes[newNodeId]).toMatchObject({ role: 'user', content: 'More please' });
  });

  it('accepts a frame of exactly maxFrameBytes', async () => {
    const newNodeId = newMessageId();
    const withPrompt = (userPrompt: string) =>
      frame('CPP_PROMPT', promptPayload(world, { newNodeId, userPrompt }), { timestamp: 1_700_000_000_000 });
    const promptLength = MAX_FRAME_BYTES - Buffer.byteLength(withPrompt(''));
    const largest = withPrompt('x'.repeat(promptLength));
    expect(Buffer.byteLength(largest)).toBe(MAX_FRAME_BYTES);
    world.client.sendRaw(largest);
    const sync = await requestSync(world.client, world.threadId);
    expect(sync.nodes[newNodeId]?.content).toHaveLength(promptLength);
  });
});

describe('the hard limit', () => {
  it('closes the connection with 1009 on a frame over 8 × maxFrameBytes, and leaves the thread and other connections alone', async () => {
    const bystander = await fixture.connect();
    world.client.sendRaw(frame('CPP_PROMPT', promptPayload(world, { userPrompt: 'x'.repeat(8 * MAX_FRAME_BYTES) })));
    expect(await world.client.closed).toBe(1009);
    expect(await requestSync(bystander, world.threadId)).toEqual(world.before);
  });
});
