import {
  newMessageId,
  type ErrorCode,
  type ErrorFrame,
  type GraphPatchFrame,
  type ServerFrame,
  type StreamChunkFrame,
  type StreamCompletedFrame,
  type SyncGraphFrame,
  type TextPart,
  type ThreadSummary,
  type ThreadsFrame,
} from '@promethea/cpp-protocol';
import { expect } from 'vitest';
import type { RawClient } from './raw-client.js';

/** The steps of a CPP conversation, taken over a RawClient exactly as the protocol describes them. */

export type SyncPayload = SyncGraphFrame['payload'];
/** A structural update, as a patch or as a full sync, whichever the connection asked for. */
export type GraphUpdate = GraphPatchFrame['payload'] | SyncPayload;

export interface Exchange {
  userNodeId: string;
  assistantNodeId: string;
  /** The update that added the exchange. */
  update: GraphUpdate;
}

export async function openThread(
  client: RawClient,
  fields: { threadId?: string; patches?: boolean; presence?: boolean } = {},
): Promise<SyncPayload> {
  client.send('CPP_THREAD_OPEN', fields);
  return nextSyncAnswer(client, fields.threadId);
}

export async function requestSync(client: RawClient, threadId: string): Promise<SyncPayload> {
  client.send('CPP_SYNC_REQUEST', { threadId });
  return nextSyncAnswer(client, threadId);
}

/** The first CPP_SYNC_GRAPH (of the thread, if known) received after the request just sent. */
async function nextSyncAnswer(client: RawClient, threadId: string | undefined): Promise<SyncPayload> {
  const mark = client.mark();
  const sync = await client.next(
    'CPP_SYNC_GRAPH',
    (frame) => client.frames.indexOf(frame) >= mark && (threadId === undefined || frame.payload.threadId === threadId),
  );
  return sync.payload;
}

/** The next structural update of the thread (patch or sync) that `matches`. */
export async function nextUpdate(
  client: RawClient,
  threadId: string,
  matches: (update: GraphUpdate) => boolean = () => true,
): Promise<GraphUpdate> {
  const isUpdate = (frame: ServerFrame): frame is Extract<ServerFrame, { payload: GraphUpdate }> =>
    (frame.type === 'CPP_GRAPH_PATCH' || frame.type === 'CPP_SYNC_GRAPH') &&
    frame.payload.threadId === threadId &&
    matches(frame.payload);
  return (await client.nextMatching(isUpdate, `structural update of ${threadId}`)).payload;
}

/** Sends CPP_PROMPT and waits for the update that adds its exchange. */
export async function prompt(
  client: RawClient,
  threadId: string,
  userPrompt: string,
  fields: Record<string, unknown> = {},
): Promise<Exchange> {
  const userNodeId = typeof fields.newNodeId === 'string' ? fields.newNodeId : newMessageId();
  client.send('CPP_PROMPT', { activeThreadId: threadId, userPrompt, newNodeId: userNodeId, ...fields });
  return exchangeOf(client, threadId, userNodeId);
}

/** Sends CPP_PIVOT_INIT and waits for the update that adds the branch. */
export async function pivot(
  client: RawClient,
  threadId: string,
  interruptedNodeId: string,
  userPrompt: string,
  fields: Record<string, unknown> = {},
): Promise<Exchange> {
  const userNodeId = typeof fields.newBranchNodeId === 'string' ? fields.newBranchNodeId : newMessageId();
  client.send('CPP_PIVOT_INIT', {
    interruptedNodeId,
    activeThreadId: threadId,
    userPrompt,
    newBranchNodeId: userNodeId,
    ...fields,
  });
  return exchangeOf(client, threadId, userNodeId);
}

async function exchangeOf(client: RawClient, threadId: string, userNodeId: string): Promise<Exchange> {
  const update = await nextUpdate(client, threadId, (candidate) => candidate.nodes[userNodeId] !== undefined);
  const assistantNodeId = update.nodes[userNodeId]!.childrenIds[0];
  if (assistantNodeId === undefined) throw new Error(`user node ${userNodeId} has no answer`);
  return { userNodeId, assistantNodeId, update };
}

/** Waits for the node's CPP_STREAM_COMPLETED and the update that marks it completed. */
export async function completion(
  client: RawClient,
  threadId: string,
  nodeId: string,
): Promise<{ completed: StreamCompletedFrame['payload']; update: GraphUpdate }> {
  const completed = (await client.next('CPP_STREAM_COMPLETED', (frame) => frame.payload.nodeId === nodeId)).payload;
  const update = await nextUpdate(client, threadId, (candidate) => candidate.nodes[nodeId]?.status === 'completed');
  return { completed, update };
}

/** Waits until the client has received `count` chunks of the node's part in all. */
export async function chunksReceived(
  client: RawClient,
  nodeId: string,
  count: number,
  part: TextPart = 'content',
): Promise<void> {
  if (chunksOf(client, nodeId, part).length >= count) return;
  await client.next('CPP_STREAM_CHUNK', () => chunksOf(client, nodeId, part).length >= count);
}

/** The next CPP_ERROR with `code`, checked against `fields` (refId, refType, threadId, nodeId). */
export async function expectError(
  client: RawClient,
  code: ErrorCode,
  fields: Partial<ErrorFrame['payload']> = {},
): Promise<ErrorFrame['payload']> {
  const error = (await client.next('CPP_ERROR')).payload;
  expect(error).toMatchObject({ code, ...fields });
  return error;
}

/** The chunks of one part received for a node, checked to be contiguous: each starts where the previous ended. */
export function chunksOf(client: RawClient, nodeId: string, part: TextPart = 'content'): StreamChunkFrame['payload'][] {
  const chunks = client
    .all('CPP_STREAM_CHUNK')
    .map((frame) => frame.payload)
    .filter((chunk) => chunk.nodeId === nodeId && (chunk.part ?? 'content') === part);
  for (const [index, chunk] of chunks.entries()) {
    const previous = chunks[index - 1];
    if (previous) expect(chunk.offset).toBe(previous.offset + previous.delta.length);
  }
  return chunks;
}

/** The text of a node's part as its chunks delivered it (from the first chunk received). */
export function streamedText(client: RawClient, nodeId: string, part: TextPart = 'content'): string {
  return chunksOf(client, nodeId, part)
    .map((chunk) => chunk.delta)
    .join('');
}

/**
 * CPP_THREAD_LIST, answered by CPP_THREADS. It touches no thread, so it also serves as a round trip: once it is
 * answered, every frame the server had already sent this client has arrived.
 */
export async function listThreads(client: RawClient): Promise<ThreadSummary[]> {
  const mark = client.mark();
  client.send('CPP_THREAD_LIST', {});
  return (await client.next('CPP_THREADS', (frame) => client.frames.indexOf(frame) >= mark)).payload.threads;
}

/** One CPP_THREAD_LIST with `fields` (limit, cursor, subscribe), and its CPP_THREADS. */
export async function listPage(
  client: RawClient,
  fields: { limit?: number; cursor?: string; subscribe?: boolean } = {},
): Promise<ThreadsFrame['payload']> {
  const mark = client.mark();
  client.send('CPP_THREAD_LIST', fields);
  return (await client.next('CPP_THREADS', (frame) => client.frames.indexOf(frame) >= mark)).payload;
}
