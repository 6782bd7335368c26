import { ErrorCode } from '@promethea/cpp-protocol';
import { ProviderError } from '@promethea/cpp-server';
import { describe, expect, it } from 'vitest';
import { completion, expectError, openThread, pivot, prompt } from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';
import { startStreamingThread } from '../support/streaming-thread.js';
import { captureLogs, type LogLine } from './support/captured-logs.js';

const fixture = useServer();

/** A prompt, a pivot that halts its answer, the new answer to its end. */
async function promptAndPivot(options: { logPrompts?: boolean } = {}) {
  const logs = captureLogs('debug');
  const setup = await startStreamingThread(fixture, ['Hello', ' wor', 'ld', ' and', ' more'], 3, {
    logger: logs.logger,
    ...options,
  });
  const branch = await pivot(setup.client, setup.threadId, setup.assistantNodeId, 'Rust instead');
  await completion(setup.client, setup.threadId, branch.assistantNodeId);
  return { logs, setup, branch };
}

function line(lines: LogLine[], msg: string, fields: Record<string, unknown> = {}): LogLine {
  const found = lines.find(
    (candidate) => candidate.msg === msg && Object.entries(fields).every(([key, value]) => candidate[key] === value),
  );
  if (!found)
    throw new Error(
      `no log line "${msg}" with ${JSON.stringify(fields)} in:\n${lines.map((entry) => JSON.stringify(entry)).join('\n')}`,
    );
  return found;
}

describe('structured logs', () => {
  it('are JSON lines with level names, times, and the connection and thread ids wherever they apply', async () => {
    const { logs, setup, branch } = await promptAndPivot();
    const lines = logs.lines;
    const connectionId = line(lines, 'connection opened').connectionId;
    expect(connectionId).toMatch(/^conn_/);
    expect(line(lines, 'connection opened')).toMatchObject({
      level: 'info',
      did: 'anonymous',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const ids = { connectionId, threadId: setup.threadId };
    expect(line(lines, 'prompt received')).toMatchObject({
      ...ids,
      level: 'info',
      frameType: 'CPP_PROMPT',
      promptChars: 'Tell me about Clojure'.length,
    });
    expect(line(lines, 'pivot received')).toMatchObject({
      ...ids,
      frameType: 'CPP_PIVOT_INIT',
      promptChars: 'Rust instead'.length,
    });
    // Engine lines name the connection whose frame started the pivot or the answer.
    const pivotLine = line(lines, 'pivot');
    expect(pivotLine).toMatchObject({
      ...ids,
      level: 'info',
      interruptedNodeId: setup.assistantNodeId,
      newBranchNodeId: branch.userNodeId,
    });
    expect(Object.keys(pivotLine.stepsMs as object)).toEqual(['abort', 'spawn', 'commit', 'insert']);
    expect(pivotLine.haltMs).toEqual(expect.any(Number));
    expect(line(lines, 'generation halted')).toMatchObject({
      ...ids,
      nodeId: setup.assistantNodeId,
      chars: 'Hello world'.length,
      model: 'scripted-model',
    });
    expect(line(lines, 'generation completed')).toMatchObject({
      ...ids,
      nodeId: branch.assistantNodeId,
      finishReason: 'stop',
      chars: 'New answer'.length,
    });
    expect(line(lines, 'frame received', { frameType: 'CPP_THREAD_OPEN' })).toMatchObject({
      level: 'debug',
      connectionId,
    });
  });

  it('never contain prompt or answer text by default', async () => {
    const { logs } = await promptAndPivot();
    for (const text of ['Tell me about Clojure', 'Rust instead', 'Hello wor', 'New answer'])
      expect(logs.text()).not.toContain(text);
  });

  it('contain prompts and answers with logPrompts, for debugging', async () => {
    const { logs } = await promptAndPivot({ logPrompts: true });
    expect(line(logs.lines, 'prompt received').prompt).toBe('Tell me about Clojure');
    expect(line(logs.lines, 'pivot received').prompt).toBe('Rust instead');
    expect(line(logs.lines, 'generation halted').answer).toBe('Hello world');
    expect(line(logs.lines, 'generation completed').answer).toBe('New answer');
  });

  it('report refused frames as info and server failures as errors, with the connection', async () => {
    const logs = captureLogs('info');
    const server = await fixture.start({ logger: logs.logger });
    server.on('pivot', () => {
      throw new Error('a bug in a pivot listener');
    });
    const client = await fixture.connect();
    client.sendRaw('not JSON at all');
    await expectError(client, ErrorCode.BAD_FRAME);
    const { threadId } = await openThread(client);
    const { assistantNodeId } = await prompt(client, threadId, 'Hello');
    client.send(
      'CPP_PIVOT_INIT',
      {
        interruptedNodeId: assistantNodeId,
        activeThreadId: threadId,
        userPrompt: 'Again',
        newBranchNodeId: 'msg_branch',
      },
      { id: 'p1' },
    );
    await expectError(client, ErrorCode.INTERNAL);

    const connectionId = line(logs.lines, 'connection opened').connectionId;
    expect(line(logs.lines, 'error sent', { code: 'BAD_FRAME' })).toMatchObject({
      level: 'info',
      connectionId,
      error: 'frame is not valid JSON',
    });
    expect(line(logs.lines, 'error sent', { code: 'INTERNAL' })).toMatchObject({
      level: 'error',
      connectionId,
      refType: 'CPP_PIVOT_INIT',
      refId: 'p1',
    });
    expect(line(logs.lines, 'server error')).toMatchObject({
      level: 'error',
      connectionId,
      err: expect.objectContaining({ message: 'a bug in a pivot listener' }),
    });
  });

  it('report a provider failure as a warning with its message, which never holds a key', async () => {
    const failure = new ProviderError('Example answered HTTP 401: invalid key [redacted]', { status: 401 });
    const logs = captureLogs('info');
    await fixture.start({
      logger: logs.logger,
      model: new ScriptedModel({ chunks: ['Par', 'tial'], ending: failure }, { gated: false }),
    });
    const client = await fixture.connect();
    const { threadId } = await openThread(client);
    const { assistantNodeId } = await prompt(client, threadId, 'Hello');
    await expectError(client, ErrorCode.PROVIDER_ERROR);
    expect(line(logs.lines, 'generation failed')).toMatchObject({
      level: 'warn',
      threadId,
      nodeId: assistantNodeId,
      error: failure.message,
      status: 401,
      chars: 7,
    });
  });
});
