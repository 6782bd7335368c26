import { describe, expect, it } from 'vitest';
import { chunksReceived, completion, openThread, pivot, prompt, type Exchange } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { useServer } from '../support/start-server.js';

const fixture = useServer();

/** Answer n is "answer n, part two". */
const answerOf = (callIndex: number) => ({ chunks: [`answer ${callIndex}`, ', part two'] });

let model: ScriptedModel;
let client: RawClient;
let threadId: string;

async function start(): Promise<void> {
  model = new ScriptedModel(answerOf);
  await fixture.start({ model });
  client = await fixture.connect();
  threadId = (await openThread(client, { patches: true })).threadId;
}

/** Runs `step`, then lets the answer it started stream in full. */
async function answered(step: () => Promise<Exchange>): Promise<Exchange> {
  const callIndex = model.calls.length;
  const exchange = await step();
  (await model.call(callIndex)).releaseAll();
  await completion(client, threadId, exchange.assistantNodeId);
  return exchange;
}

/** Runs `step`, then lets `chunks` chunks of its answer through and leaves it streaming. */
async function partlyAnswered(step: () => Promise<Exchange>, chunks: number): Promise<Exchange> {
  const callIndex = model.calls.length;
  const exchange = await step();
  (await model.call(callIndex)).release(chunks);
  await chunksReceived(client, exchange.assistantNodeId, chunks);
  return exchange;
}

const user = (content: string) => ({ role: 'user', content });
const assistant = (content: string) => ({ role: 'assistant', content });

describe('the context given to the model', () => {
  it('is the branch from the root to the new prompt, with the partial text of an interrupted answer, and nothing of other branches', async () => {
    await start();
    const plan = await answered(() => prompt(client, threadId, 'Plan a trip'));
    const japan = await partlyAnswered(() => prompt(client, threadId, 'Japan'), 1);
    const korea = await answered(() => pivot(client, threadId, japan.assistantNodeId, 'Korea instead'));
    expect(model.calls[2]?.messages).toEqual([
      user('Plan a trip'),
      assistant('answer 0, part two'),
      user('Japan'),
      assistant('answer 1'),
      user('Korea instead'),
    ]);

    await answered(() => prompt(client, threadId, 'Peru', { parentNodeId: plan.assistantNodeId }));
    expect(model.calls[3]?.messages).toEqual([user('Plan a trip'), assistant('answer 0, part two'), user('Peru')]);

    await answered(() => prompt(client, threadId, 'Seoul in May?', { parentNodeId: korea.assistantNodeId }));
    expect(model.calls[4]?.messages.map((message) => message.content)).toEqual([
      'Plan a trip',
      'answer 0, part two',
      'Japan',
      'answer 1',
      'Korea instead',
      'answer 2, part two',
      'Seoul in May?',
    ]);
  });

  it('leaves out an assistant turn interrupted before it said anything', async () => {
    await start();
    const first = await partlyAnswered(() => prompt(client, threadId, 'Hello'), 0);
    await answered(() => pivot(client, threadId, first.assistantNodeId, 'Hello again', { receivedContentLength: 0 }));
    expect(model.calls[1]?.messages).toEqual([user('Hello'), user('Hello again')]);
  });

  it('keeps the text of an answer cut at receivedContentLength, as the user saw it', async () => {
    await start();
    const first = await partlyAnswered(() => prompt(client, threadId, 'Hello'), 2);
    await answered(() =>
      pivot(client, threadId, first.assistantNodeId, 'Wait', { receivedContentLength: 'answer 0, part'.length }),
    );
    expect(model.calls[1]?.messages).toEqual([user('Hello'), assistant('answer 0, part'), user('Wait')]);
  });
});
