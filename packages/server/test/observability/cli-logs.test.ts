import { ErrorCode } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { fixture, sse, startReplayServer, status, type ReplayServer } from '../model/replay-server.js';
import { completion, expectError, openThread, prompt } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { runCli, type CliProcess } from './support/cli-process.js';

const API_KEY = 'sk-live-0123456789abcdefSECRET';
const FIRST_PROMPT = 'Tell me about zebras and their stripes';
const SECOND_PROMPT = 'And about okapis';

let upstream: ReplayServer | undefined;
let cli: CliProcess | undefined;
let client: RawClient | undefined;

afterEach(async () => {
  await client?.close();
  await cli?.stop();
  await upstream?.close();
  [client, cli, upstream] = [undefined, undefined, undefined];
});

/**
 * cpp-server against a stand-in for an OpenAI-compatible vendor, its API key in the environment: a prompt that
 * is answered, then one the vendor refuses with a 401 that echoes the key, as OpenAI does. Returns the output.
 */
async function converse(extraArgs: string[] = []): Promise<string[]> {
  upstream = await startReplayServer(
    sse(fixture('openai-chat-stream.sse')),
    status(401, { error: { message: `Incorrect API key provided: ${API_KEY}` } }),
  );
  const args = [
    '--model',
    'openai-compatible',
    '--model-base-url',
    upstream.url,
    '--model-name',
    'gpt-test',
    ...extraArgs,
  ];
  cli = await runCli(args, { CPP_MODEL_API_KEY: API_KEY });
  client = await RawClient.connect(cli.url);
  const { threadId } = await openThread(client);
  const answered = await prompt(client, threadId, FIRST_PROMPT);
  await completion(client, threadId, answered.assistantNodeId);
  await prompt(client, threadId, SECOND_PROMPT);
  await expectError(client, ErrorCode.PROVIDER_ERROR);
  await client.close();
  await cli.stop();
  // The key was in play: the vendor received it.
  expect(upstream.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`);
  return cli.lines;
}

function jsonLines(lines: string[]): Array<Record<string, unknown>> {
  return lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('cpp-server logs', () => {
  it('are JSON lines on stdout after the banner, without the API key, the prompts or the answers', async () => {
    const lines = await converse();
    const output = lines.join('\n');
    expect(output).not.toContain(API_KEY);
    for (const text of [FIRST_PROMPT, SECOND_PROMPT, 'Hello there!']) expect(output).not.toContain(text);

    // The banner is for people; every other line is one JSON object.
    expect(
      lines.filter((line) => !line.startsWith('{')).every((line) => /^(cpp-server listening on | {2})/.test(line)),
    ).toBe(true);
    const logs = jsonLines(lines);
    expect(logs.map((line) => line.msg)).toEqual(
      expect.arrayContaining([
        'cpp-server listening',
        'prompt received',
        'generation completed',
        'generation failed',
        'shutting down: interrupting running answers, closing connections',
      ]),
    );
    expect(logs.find((line) => line.msg === 'prompt received')).toMatchObject({
      level: 'info',
      promptChars: FIRST_PROMPT.length,
      threadId: expect.stringMatching(/^thread_/),
    });
    expect(logs.find((line) => line.msg === 'generation failed')).toMatchObject({
      level: 'warn',
      status: 401,
      error: expect.stringContaining('[redacted]'),
    });
  });

  it('contain the prompts and answers with --log-prompts, and still never the key', async () => {
    const logs = jsonLines(await converse(['--log-prompts']));
    expect(logs.filter((line) => line.msg === 'prompt received').map((line) => line.prompt)).toEqual([
      FIRST_PROMPT,
      SECOND_PROMPT,
    ]);
    expect(logs.find((line) => line.msg === 'generation completed')?.answer).toBe('Hello there!');
    expect(JSON.stringify(logs)).not.toContain(API_KEY);
  });

  it('follow LOG_LEVEL', async () => {
    cli = await runCli([], { LOG_LEVEL: 'warn' });
    client = await RawClient.connect(cli.url);
    await openThread(client);
    await client.close();
    await cli.stop();
    expect(jsonLines(cli.lines)).toEqual([]);
  });
});
