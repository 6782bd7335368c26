import { CPPError, CPPServerError, ErrorCode } from '@promethea/cpp-client';
import { describe, expect, it } from 'vitest';
import { useFakeSession } from './support/session.js';

describe('CPPClient errors', () => {
  const session = useFakeSession();

  it('settles each request by its own frame id', async () => {
    const client = session.connect();
    const reported: CPPServerError[] = [];
    client.on('error', (error) => reported.push(error));
    const { result, threadId, userNodeId, assistantNodeId } = await session.startPrompt(client);
    session.server.complete(threadId, assistantNodeId);
    await result;

    const unknown = client.anchor('msg_unknown');
    const known = client.anchor(userNodeId);
    const error = await unknown.catch((caught: unknown) => caught);
    expect((await known).activeHeadMessageId).toBe(userNodeId);
    const anchors = session.server.framesOf('CPP_ANCHOR_HEAD');
    expect(error).toBeInstanceOf(CPPServerError);
    expect(error).toMatchObject({ code: ErrorCode.NOT_FOUND, refId: anchors[0]?.id, refType: 'CPP_ANCHOR_HEAD' });
    expect(CPPError.isInstance(error)).toBe(true);
    expect(reported).toEqual([]);
  });

  it('rejects a prompt the server refuses, and the stream it did not start keeps going', async () => {
    const client = session.connect();
    const first = await session.startPrompt(client);
    await expect(client.prompt({ userPrompt: 'Another question' })).rejects.toMatchObject({
      code: ErrorCode.THREAD_BUSY,
    });
    session.server.chunk(first.threadId, first.assistantNodeId, 'Still here.');
    session.server.complete(first.threadId, first.assistantNodeId);
    expect(await first.result).toMatchObject({ content: 'Still here.', status: 'completed' });
  });

  it('rejects the prompt whose assistant node the model failed on', async () => {
    const client = session.connect();
    const reported: CPPServerError[] = [];
    client.on('error', (error) => reported.push(error));
    const { result, threadId, assistantNodeId } = await session.startPrompt(client);
    const peer = session.server.peers[0]!;
    session.server.send(peer, 'CPP_ERROR', {
      code: ErrorCode.PROVIDER_ERROR,
      message: 'upstream 500',
      threadId,
      nodeId: assistantNodeId,
    });

    await expect(result).rejects.toMatchObject({
      code: ErrorCode.PROVIDER_ERROR,
      nodeId: assistantNodeId,
      message: 'upstream 500',
    });
    expect(reported).toEqual([]);
  });

  it("emits errors that answer no request as 'error'", async () => {
    const client = session.connect();
    await client.openThread();
    const reported = new Promise<CPPServerError>((resolve) => client.once('error', resolve));
    session.server.send(session.server.peers[0]!, 'CPP_ERROR', {
      code: ErrorCode.PROVIDER_ERROR,
      message: 'model down',
      nodeId: 'msg_someone_else',
    });

    expect(await reported).toMatchObject({ code: ErrorCode.PROVIDER_ERROR, nodeId: 'msg_someone_else' });
  });

  it("ignores invalid server frames, reports them as 'error', and keeps working", async () => {
    const client = session.connect();
    await client.ready();
    const reported: CPPServerError[] = [];
    client.on('error', (error) => reported.push(error));
    const peer = session.server.peers[0]!;
    peer.send('not json');
    peer.send(JSON.stringify({ type: 'CPP_STREAM_CHUNK', timestamp: 1, payload: { threadId: 'thread_x' } }));
    peer.send(JSON.stringify({ type: 'CPP_FUTURE_FRAME', timestamp: 1, payload: {} }));
    peer.send(Buffer.from('binary'));

    expect(await client.listThreads()).toEqual([]);
    expect(reported.map((error) => error.code)).toEqual([
      ErrorCode.BAD_FRAME,
      ErrorCode.INVALID_FRAME,
      ErrorCode.UNKNOWN_TYPE,
      ErrorCode.BAD_FRAME,
    ]);
  });
});
