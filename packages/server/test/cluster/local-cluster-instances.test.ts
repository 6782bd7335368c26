import { once } from 'node:events';
import { ErrorCode, findInvariantViolations } from '@promethea/cpp-protocol';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { eventually } from '../support/eventually.js';
import {
  chunksReceived,
  completion,
  expectError,
  nextUpdate,
  openThread,
  pivot,
  prompt,
  requestSync,
  streamedText,
} from '../support/protocol-steps.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { mirrorOf } from '../support/thread-mirror.js';
import { CopyCatchUp } from '../../src/engine/copy-catch-up.js';
import { useLocalInstances, type LocalInstance } from './local-instances.js';

const CHUNKS = ['Clojure ', 'is ', 'a ', 'Lisp ', 'on ', 'the ', 'JVM.'];
const NEW_ANSWER = { chunks: ['New ', 'answer'], gated: false };
/** docs/cluster.md: the clients of an instance killed while it writes an answer are told within 5 s of the death. */
const INSTANCE_LOSS_LIMIT_MS = 5_000;

/** Servers in one process on one LocalCluster: the cluster logic, fast and with every model under control. */
describe('servers sharing a store through a LocalCluster', () => {
  const instances = useLocalInstances();

  const expectSoundStore = async (threadId: string) => {
    const stored = await instances.store.loadThread(threadId);
    expect(findInvariantViolations(stored!.graph)).toEqual([]);
    return stored!.graph;
  };

  /**
   * The instance writing the thread's answer dies: it renews its lock no more, and forwarded commands reach an inbox
   * nobody reads.
   */
  const generatingInstanceDies = async (threadId: string) => {
    const dead = instances.cluster.liveLock(threadId)!.holder;
    instances.cluster.members.get(dead)!.renewLock = async () => true;
    const unread = instances.cluster.join();
    await unread.start({ command: () => new Promise(() => {}), error: () => {}, reconnected: () => {} });
    instances.cluster.members.set(dead, unread);
  };

  /**
   * An answer streams on `dying`, three of its chunks reach a client of `surviving`, and `dying` dies: the client
   * and what it follows.
   */
  const answerFollowedFromAnotherInstanceWhenItsInstanceDies = async (
    dying: LocalInstance,
    surviving: LocalInstance,
  ) => {
    const writer = await dying.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const client = await surviving.connect();
    await openThread(client, { threadId, patches: true });
    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    (await dying.model.call(0)).release(3);
    await chunksReceived(client, exchange.assistantNodeId, 3);
    await generatingInstanceDies(threadId);
    return { client, threadId, exchange };
  };

  /** An answer streams on one instance, and a client of the other instance has two of its chunks. */
  const answerStreamingOnAnotherInstance = async () => {
    const [generating, other] = await instances.start(2, { chunks: CHUNKS });
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    const client = await other!.connect();
    await openThread(client, { threadId, patches: true });
    (await generating!.model.call(0)).release(2);
    await chunksReceived(client, exchange.assistantNodeId, 2);
    return { other: other!, writer, client, threadId, exchange };
  };

  it('fan out every frame of a thread to its clients on every instance', async () => {
    const [generating, watching] = await instances.start(2, { chunks: CHUNKS });
    const writer = await generating!.connect();
    const reader = await watching!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    await openThread(reader, { threadId });

    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    (await generating!.model.call(0)).releaseAll();
    await completion(writer, threadId, exchange.assistantNodeId);
    await nextUpdate(reader, threadId, (update) => update.nodes[exchange.assistantNodeId]?.status === 'completed');

    const stored = await expectSoundStore(threadId);
    expect(streamedText(reader, exchange.assistantNodeId)).toBe(CHUNKS.join(''));
    expect(reader.all('CPP_STREAM_COMPLETED')).toHaveLength(1);
    expect(mirrorOf(reader.frames, threadId)).toEqual({ graph: stored, problems: [] });
    expect(mirrorOf(writer.frames, threadId)).toEqual({ graph: stored, problems: [] });
    expect(watching!.model.calls).toEqual([]);
  });

  it("let go of a thread's generation when a prompt is refused after claiming it: another instance may then answer", async () => {
    const [refusing, answering] = await instances.start(2, NEW_ANSWER);
    const first = await refusing!.connect();
    const { threadId } = await openThread(first, { patches: true });
    // An unknown parent passes the checks made before the claim, and is refused by the plan made after it.
    first.send('CPP_PROMPT', {
      activeThreadId: threadId,
      userPrompt: 'Hello',
      newNodeId: 'msg_orphan',
      parentNodeId: 'msg_nowhere',
    });
    await expectError(first, ErrorCode.NOT_FOUND);
    const second = await answering!.connect();
    await openThread(second, { threadId, patches: true });
    const exchange = await prompt(second, threadId, 'Hello again');
    await completion(second, threadId, exchange.assistantNodeId);
    expect(refusing!.model.calls).toEqual([]);
  });

  it('run a pivot on the instance whose generation it halts, and tell the clients of both', async () => {
    const [generating, pivoting] = await instances.start(2, (index) => (index === 0 ? { chunks: CHUNKS } : NEW_ANSWER));
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    const client = await pivoting!.connect();
    await openThread(client, { threadId, patches: true });
    const call = await generating!.model.call(0);
    call.release(3);
    await chunksReceived(client, exchange.assistantNodeId, 3);
    const lookUps = vi.spyOn(instances.store, 'findNodeThread');

    const branch = await pivot(client, threadId, exchange.assistantNodeId, 'Rust instead', {
      receivedContentLength: 8,
    });

    // Checked where it ran, and not first on the instance that forwarded it too: one look-up of its new node's id.
    expect(lookUps).toHaveBeenCalledTimes(1);
    expect(call.signal.aborted).toBe(true);
    // The update with the branch came after the halt: the halt is among the frames already received.
    const halted = client.all('CPP_STREAM_HALTED')[0]?.payload;
    expect(halted).toMatchObject({
      interruptedNodeId: exchange.assistantNodeId,
      finalContentLength: 8,
      reason: 'pivot',
    });
    expect((await writer.next('CPP_STREAM_HALTED')).payload).toEqual(halted);
    await completion(client, threadId, branch.assistantNodeId);
    await completion(writer, threadId, branch.assistantNodeId);
    expect(pivoting!.model.calls).toEqual([]);
    expect(generating!.model.calls).toHaveLength(2);
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Clojure ' });
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it('run the answers of several models on one instance, a stop of one and a pivot of all forwarded from another', async () => {
    const alpha = new ScriptedModel({ chunks: CHUNKS });
    const beta = new ScriptedModel({ chunks: CHUNKS });
    const gamma = new ScriptedModel(NEW_ANSWER);
    const models = [
      { id: 'alpha', provider: alpha },
      { id: 'beta', provider: beta },
      { id: 'gamma', provider: gamma },
    ];
    const [generating, other] = await instances.start(2, NEW_ANSWER, { model: undefined, models });
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const client = await other!.connect();
    await openThread(client, { threadId, patches: true });
    const asked = await prompt(writer, threadId, 'What is Clojure?', { models: ['alpha', 'beta'] });
    const [first, second] = asked.update.nodes[asked.userNodeId]!.childrenIds;
    (await alpha.call(0)).release(3);
    (await beta.call(0)).release(2);
    await chunksReceived(client, first!, 3);
    await chunksReceived(client, second!, 2);

    // A stop of one, sent to the other instance: only that answer halts.
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: second!, receivedContentLength: 3 });
    expect((await client.next('CPP_STREAM_HALTED')).payload).toMatchObject({
      interruptedNodeId: second,
      finalContentLength: 3,
    });
    await nextUpdate(client, threadId, (update) => update.nodes[second!]?.status === 'interrupted');
    expect((await requestSync(client, threadId)).nodes[first!]?.status).toBe('streaming');

    // A pivot of the other, from the other instance, answered by gamma there where the generation runs.
    const branch = await pivot(client, threadId, first!, 'Rust instead', { receivedContentLength: 8, model: 'gamma' });
    await completion(client, threadId, branch.assistantNodeId);
    await completion(writer, threadId, branch.assistantNodeId);
    expect(gamma.calls).toHaveLength(1);
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[first!]).toMatchObject({ status: 'interrupted', content: 'Clojure ' });
    expect(stored.nodes[second!]).toMatchObject({ status: 'interrupted', content: 'Clo' });
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
    expect(mirrorOf(writer.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it('stop a generation of another instance, and refuse a prompt there with THREAD_BUSY', async () => {
    const { writer, client, threadId, exchange } = await answerStreamingOnAnotherInstance();
    client.send(
      'CPP_PROMPT',
      { activeThreadId: threadId, userPrompt: 'Me too', newNodeId: 'msg_busy' },
      { id: 'busy' },
    );
    await expectError(client, 'THREAD_BUSY', { refId: 'busy' });
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });

    expect((await client.next('CPP_STREAM_HALTED')).payload).toMatchObject({
      reason: 'stop',
      finalContentLength: 'Clojure is '.length,
    });
    await nextUpdate(writer, threadId, (update) => update.nodes[exchange.assistantNodeId]?.status === 'interrupted');
    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId }, { id: 'again' });
    await expectError(client, 'NOT_STREAMING', { refId: 'again' });
    const stored = await expectSoundStore(threadId);
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it('run the frame after a stop run on another instance on the change the stop made, though the reply outruns it', async () => {
    const { other, client, threadId, exchange } = await answerStreamingOnAnotherInstance();
    // The other instance hears the thread's messages late: only once it has decided how to go on after the stop's
    // reply, by waiting for its copy to catch up, or by forwarding the next frame on the copy it has.
    const holder = instances.cluster.liveLock(threadId)!.holder;
    const lagging = [...instances.cluster.listeners.get(threadId)!].find(
      (listener) => listener.member.instanceId !== holder,
    )!;
    const held: Array<() => void> = [];
    const deliver = lagging.deliver;
    lagging.deliver = (message) => held.push(() => deliver(message));
    const deliverHeld = () => {
      for (const delivered of held.splice(0)) delivered();
    };
    const reach = CopyCatchUp.prototype.reach;
    const catchingUp = vi.spyOn(CopyCatchUp.prototype, 'reach').mockImplementation(function (
      this: CopyCatchUp,
      version: number,
    ) {
      const reached = reach.call(this, version);
      deliverHeld();
      return reached;
    });
    onTestFinished(() => catchingUp.mockRestore());
    const transport = lagging.member;
    const forward = transport.sendToLockHolder.bind(transport);
    const forwarded = vi.spyOn(transport, 'sendToLockHolder').mockImplementation(async (...args) => {
      if (forwarded.mock.calls.length > 1) deliverHeld();
      return forward(...args);
    });

    client.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });
    const next = await prompt(client, threadId, 'And Rust?', { parentNodeId: exchange.assistantNodeId });

    // As a client that waited for the stop's update before it prompted gets it: the halt, the cut, then the prompt,
    // run here (the thread no longer streams elsewhere), and no sync in place of what it missed.
    expect(forwarded).toHaveBeenCalledTimes(1);
    expect(client.all('CPP_STREAM_HALTED')).toHaveLength(1);
    expect(client.all('CPP_SYNC_GRAPH')).toHaveLength(1);
    expect(client.all('CPP_ERROR')).toEqual([]);
    (await other.model.call(0)).releaseAll();
    await completion(client, threadId, next.assistantNodeId);
    expect(other.model.calls).toHaveLength(1);
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Clojure is ' });
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it("take no lock to recover an answer that a copy still shows streaming after its instance ended it: the thread's next answer is not refused", async () => {
    const { writer, client, threadId, exchange } = await answerStreamingOnAnotherInstance();
    const holder = instances.cluster.liveLock(threadId)!.holder;
    const lagging = [...instances.cluster.listeners.get(threadId)!].find(
      (listener) => listener.member.instanceId !== holder,
    )!;
    // The other instance hears nothing of the thread: its copy shows the answer streaming after its end.
    const deliver = lagging.deliver;
    lagging.deliver = () => {};
    const transport = lagging.member;
    const claims = vi.spyOn(transport, 'acquireLock');
    const sweeps: Array<() => void> = [];
    const orphaned = transport.orphanedGenerations.bind(transport);
    vi.spyOn(transport, 'orphanedGenerations').mockImplementation(() => {
      sweeps.shift()?.();
      return orphaned();
    });
    const sweepBegins = () => new Promise<void>((resolve) => sweeps.push(resolve));

    writer.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });
    await nextUpdate(writer, threadId, (update) => update.nodes[exchange.assistantNodeId]?.status === 'interrupted');
    expect(instances.cluster.liveLock(threadId)).toBeUndefined();
    // A sweep of the other instance begins after the end, and another after it: the first has run its course.
    await sweepBegins();
    await sweepBegins();

    // It read the thread again instead, without the lock, and told its client what it had missed.
    expect(claims).not.toHaveBeenCalled();
    const update = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[exchange.assistantNodeId]?.status !== 'streaming',
    );
    expect(update.nodes[exchange.assistantNodeId]).toMatchObject({ status: 'interrupted' });
    lagging.deliver = deliver;
  });

  it('run a regenerate on the instance whose generation it halts, and a branch delete on any instance, telling the clients of both', async () => {
    const [generating, other] = await instances.start(2, (index) => (index === 0 ? { chunks: CHUNKS } : NEW_ANSWER));
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    const client = await other!.connect();
    await openThread(client, { threadId, patches: true });
    const call = await generating!.model.call(0);
    call.release(2);
    await chunksReceived(client, exchange.assistantNodeId, 2);

    client.send('CPP_REGENERATE', {
      activeThreadId: threadId,
      userNodeId: exchange.userNodeId,
      newNodeId: 'msg_again',
      receivedContentLength: 8,
    });
    expect((await client.next('CPP_STREAM_HALTED')).payload).toMatchObject({
      reason: 'regenerate',
      finalContentLength: 8,
    });
    expect(call.signal.aborted).toBe(true);
    await completion(client, threadId, 'msg_again');
    await completion(writer, threadId, 'msg_again');
    expect(other!.model.calls).toEqual([]);

    client.send('CPP_BRANCH_DELETE', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });
    const removal = await nextUpdate(writer, threadId, (update) => 'removedNodeIds' in update);
    expect(removal).toMatchObject({ activeHeadMessageId: 'msg_again', removedNodeIds: [exchange.assistantNodeId] });
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.userNodeId]!.childrenIds).toEqual(['msg_again']);
    expect(mirrorOf(writer.frames, threadId)).toEqual({ graph: stored, problems: [] });
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it('continue on another instance an answer stopped on the first, its reasoning and text reaching the clients of both', async () => {
    // The first answer reasons, then stops after two chunks of text; the second call, on the other instance, continues
    // it.
    let calls = 0;
    const [generating, other] = await instances.start(2, () =>
      calls++ === 0
        ? { chunks: [{ reasoning: 'Plan. ' }, 'Clojure ', 'is ', 'never sent'] }
        : { chunks: [{ reasoning: 'Go on.' }, 'a Lisp.'], gated: false },
    );
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const client = await other!.connect();
    await openThread(client, { threadId, patches: true });
    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    (await generating!.model.call(0)).release(3);
    await chunksReceived(client, exchange.assistantNodeId, 2);
    expect(streamedText(client, exchange.assistantNodeId, 'reasoning')).toBe('Plan. ');
    writer.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: exchange.assistantNodeId });
    await nextUpdate(client, threadId, (update) => update.nodes[exchange.assistantNodeId]?.status === 'interrupted');

    client.send('CPP_CONTINUE', { activeThreadId: threadId, nodeId: exchange.assistantNodeId, expectedVersion: 2 });
    await completion(writer, threadId, exchange.assistantNodeId);
    await completion(client, threadId, exchange.assistantNodeId);

    const call = await other!.model.call(0);
    expect(call.continues).toBe(true);
    expect(call.messages.at(-1)).toEqual({ role: 'assistant', content: 'Clojure is ' });
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.assistantNodeId]).toMatchObject({
      status: 'completed',
      content: 'Clojure is a Lisp.',
      reasoning: 'Plan. Go on.',
    });
    expect(mirrorOf(writer.frames, threadId)).toEqual({ graph: stored, problems: [] });
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it('give a client that opens the thread on another instance while the answer reasons the reasoning as reasoning', async () => {
    const [generating, other] = await instances.start(2, {
      chunks: [{ reasoning: 'Plan. ' }, { reasoning: 'Then. ' }, 'Hi.'],
    });
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const { assistantNodeId } = await prompt(writer, threadId, 'Think first');
    const call = await generating!.model.call(0);
    call.release(1);
    await chunksReceived(writer, assistantNodeId, 1, 'reasoning');

    // Joins between the store's batches: the streamed text the other instance holds is all it has of the answer.
    const late = await other!.connect();
    const sync = await openThread(late, { threadId, patches: true });
    expect(sync.nodes[assistantNodeId]).toMatchObject({ status: 'streaming', content: '', reasoning: 'Plan. ' });
    call.releaseAll();
    await completion(late, threadId, assistantNodeId);
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[assistantNodeId]).toMatchObject({ content: 'Hi.', reasoning: 'Plan. Then. ' });
    expect(mirrorOf(late.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it("sync a copy's clients with the text another instance streamed since their last sync, which set no new version", async () => {
    const [generating, copy] = await instances.start(2, { chunks: CHUNKS });
    const writer = await generating!.connect();
    const reader = await copy!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    await openThread(reader, { threadId });
    const { assistantNodeId } = await prompt(writer, threadId, 'What is Clojure?');
    const call = await generating!.model.call(0);
    call.release(1);
    await chunksReceived(reader, assistantNodeId, 1);
    const first = await requestSync(reader, threadId);

    call.release(2);
    await chunksReceived(reader, assistantNodeId, 3);
    const second = await requestSync(reader, threadId);
    expect(second.version).toBe(first.version);
    expect(first.nodes[assistantNodeId]).toMatchObject({ status: 'streaming', content: CHUNKS.slice(0, 1).join('') });
    expect(second.nodes[assistantNodeId]).toMatchObject({ status: 'streaming', content: CHUNKS.slice(0, 3).join('') });
    call.releaseAll();
    await completion(reader, threadId, assistantNodeId);
  });

  it("sync a copy's clients with the reasoning another instance streamed since their last sync", async () => {
    const [generating, copy] = await instances.start(2, {
      chunks: [{ reasoning: 'Plan. ' }, { reasoning: 'Then. ' }, 'Hi.'],
    });
    const writer = await generating!.connect();
    const reader = await copy!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    await openThread(reader, { threadId });
    const { assistantNodeId } = await prompt(writer, threadId, 'Think first');
    const call = await generating!.model.call(0);
    call.release(1);
    await chunksReceived(reader, assistantNodeId, 1, 'reasoning');
    await requestSync(reader, threadId);

    call.release(1);
    await chunksReceived(reader, assistantNodeId, 2, 'reasoning');
    const synced = await requestSync(reader, threadId);
    expect(synced.nodes[assistantNodeId]).toMatchObject({
      status: 'streaming',
      content: '',
      reasoning: 'Plan. Then. ',
    });
    call.releaseAll();
    await completion(reader, threadId, assistantNodeId);
  });

  it("tell the clients of a copy that reloaded after a gap in the answer's reasoning the reasoning it reloaded", async () => {
    const chunks = [{ reasoning: 'Plan. ' }, 'Hi ', { reasoning: 'More. ' }, { reasoning: 'Then. ' }, 'there.'];
    const [generating, watching] = await instances.start(2, { chunks });
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const client = await watching!.connect();
    await openThread(client, { threadId, patches: true });
    const { assistantNodeId } = await prompt(writer, threadId, 'Think first');
    const call = await generating!.model.call(0);
    call.release(2);
    await chunksReceived(client, assistantNodeId, 1);
    // The watching instance misses the second reasoning chunk, so the third shows it a gap and it reloads the thread.
    const dropped = new Promise<void>((resolve) => {
      for (const listener of instances.cluster.listeners.get(threadId)!) {
        const deliver = listener.deliver;
        listener.deliver = (message) =>
          'frame' in message && message.frame.includes('"delta":"More. "') ? resolve() : deliver(message);
      }
    });
    call.release(1);
    await dropped;
    const saved = async () => (await instances.store.loadThread(threadId))!.graph.nodes[assistantNodeId]!;
    await eventually(
      async () => ((await saved()).reasoning === 'Plan. More. ' ? true : undefined),
      'the second reasoning chunk saved',
    );
    expect((await saved()).content).toBe('Hi ');
    call.release(1);

    // The reload changes the streaming node's reasoning alone (same version, same text): the copy's clients get it.
    const synced = await nextUpdate(
      client,
      threadId,
      (update) => update.nodes[assistantNodeId]?.reasoning?.startsWith('Plan. More. ') === true,
    );
    expect(synced.nodes[assistantNodeId]).toMatchObject({ status: 'streaming', content: 'Hi ' });
    call.releaseAll();
    await completion(client, threadId, assistantNodeId);
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[assistantNodeId]).toMatchObject({ content: 'Hi there.', reasoning: 'Plan. More. Then. ' });
    expect(mirrorOf(client.frames, threadId).graph).toEqual(stored);
  });

  it('forward a continue to the instance whose generation runs, which refuses it while another answer streams', async () => {
    const [generating, other] = await instances.start(2, { chunks: CHUNKS });
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const first = await prompt(writer, threadId, 'What is Clojure?');
    (await generating!.model.call(0)).release(1);
    writer.send('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId: first.assistantNodeId });
    await nextUpdate(writer, threadId, (update) => update.nodes[first.assistantNodeId]?.status === 'interrupted');
    await prompt(writer, threadId, 'And Scheme?', { parentNodeId: first.userNodeId });
    const client = await other!.connect();
    await openThread(client, { threadId, patches: true });

    client.send(
      'CPP_CONTINUE',
      { activeThreadId: threadId, nodeId: first.assistantNodeId },
      { id: 'continue-elsewhere' },
    );
    await expectError(client, ErrorCode.THREAD_BUSY, { refId: 'continue-elsewhere' });
    expect(other!.model.calls).toEqual([]);
    expect(generating!.model.calls).toHaveLength(2);
  });

  it('resume a stream on another instance with nothing missing or doubled', async () => {
    const [generating, other] = await instances.start(2, { chunks: CHUNKS });
    const first = await generating!.connect();
    const { threadId } = await openThread(first, { patches: true });
    const exchange = await prompt(first, threadId, 'What is Clojure?');
    const call = await generating!.model.call(0);
    call.release(3);
    await chunksReceived(first, exchange.assistantNodeId, 3);
    await first.close();

    const moved = await other!.connect();
    const synced = await openThread(moved, { threadId, patches: true });
    expect(synced.nodes[exchange.assistantNodeId]).toMatchObject({
      status: 'streaming',
      content: CHUNKS.slice(0, 3).join(''),
    });
    call.releaseAll();
    await completion(moved, threadId, exchange.assistantNodeId);

    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.assistantNodeId]!.content).toBe(CHUNKS.join(''));
    expect(mirrorOf(moved.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it('let exactly one of two pivots at once on two instances halt the generation; the other branches under it', async () => {
    const [generating, left, right] = await instances.start(3, (index) =>
      index === 0 ? { chunks: CHUNKS } : NEW_ANSWER,
    );
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const exchange = await prompt(writer, threadId, 'What is Clojure?');
    (await generating!.model.call(0)).release(2);
    const clients = [await left!.connect(), await right!.connect()];
    for (const client of clients) await openThread(client, { threadId, patches: true });

    clients[0]!.send(
      'CPP_PIVOT_INIT',
      {
        interruptedNodeId: exchange.assistantNodeId,
        activeThreadId: threadId,
        userPrompt: 'Left',
        newBranchNodeId: 'msg_left',
      },
      { id: 'left' },
    );
    clients[1]!.send(
      'CPP_PIVOT_INIT',
      {
        interruptedNodeId: exchange.assistantNodeId,
        activeThreadId: threadId,
        userPrompt: 'Right',
        newBranchNodeId: 'msg_right',
      },
      { id: 'right' },
    );

    const answered = (client: (typeof clients)[number], nodeId: string) =>
      client.all('CPP_ERROR').length > 0 || client.all('CPP_GRAPH_PATCH').some((frame) => frame.payload.nodes[nodeId]);
    await eventually(
      () => (answered(clients[0]!, 'msg_left') && answered(clients[1]!, 'msg_right') ? true : undefined),
      'both pivots answered',
    );
    const stored = await expectSoundStore(threadId);
    const branches = ['msg_left', 'msg_right'].filter((id) => stored.nodes[id]);
    const refusals = clients.flatMap((client) => client.all('CPP_ERROR').map((frame) => frame.payload.code));
    expect(branches.length + refusals.length).toBe(2);
    expect(refusals.every((code) => code === 'THREAD_BUSY')).toBe(true);
    expect(stored.nodes[exchange.assistantNodeId]!.status).toBe('interrupted');
    expect(clients.flatMap((client) => client.all('CPP_STREAM_HALTED'))).toHaveLength(2);
  });

  it('recover the answer of an instance that died as soon as its lock expires when a pivot is sent to another instance, not after the reply timeout', async () => {
    // A reply timeout no test waits out: the pivot must not wait for the dead instance's answer.
    const timings = { clusterTimings: { lockTtlMs: 600, sweepIntervalMs: 100, replyTimeoutMs: 3_600_000 } };
    const [dying, surviving] = await instances.start(2, { chunks: CHUNKS }, timings);
    const { client, threadId, exchange } = await answerFollowedFromAnotherInstanceWhenItsInstanceDies(
      dying!,
      surviving!,
    );

    const branch = await pivot(client, threadId, exchange.assistantNodeId, 'Rust instead');

    expect(client.all('CPP_STREAM_HALTED')[0]?.payload).toMatchObject({
      interruptedNodeId: exchange.assistantNodeId,
      finalContentLength: 13,
      reason: 'shutdown',
    });
    (await surviving!.model.call(0)).releaseAll();
    await completion(client, threadId, branch.assistantNodeId);
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'Clojure is a ' });
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });

  it("tell the clients on another instance, within 5 s of a death with the default timings, that the dead instance's answer was interrupted", async () => {
    // The cluster's clock is fake (its lock's expiry, its renewals and sweeps); the sockets and the models are real.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'Date'] });
    onTestFinished(() => void vi.useRealTimers());
    const [dying, surviving] = await instances.start(2, { chunks: CHUNKS });
    const { client, threadId, exchange } = await answerFollowedFromAnotherInstanceWhenItsInstanceDies(
      dying!,
      surviving!,
    );
    await vi.advanceTimersByTimeAsync(INSTANCE_LOSS_LIMIT_MS);

    expect((await client.next('CPP_STREAM_HALTED')).payload).toMatchObject({
      interruptedNodeId: exchange.assistantNodeId,
      finalContentLength: 13,
      reason: 'shutdown',
    });
    const update = await nextUpdate(
      client,
      threadId,
      (candidate) => candidate.nodes[exchange.assistantNodeId]?.status === 'interrupted',
    );
    expect(update.nodes[exchange.assistantNodeId]!.content).toBe('Clojure is a ');
    expect(mirrorOf(client.frames, threadId)).toEqual({ graph: await expectSoundStore(threadId), problems: [] });
  });

  it('fence off an instance paused past its lock: resumed, it publishes nothing more of the answer another instance recovered', async () => {
    // A lock that outlives the test: the paused instance cannot tell by the clock that it may have lost it.
    const timings = { clusterTimings: { lockTtlMs: 60_000, sweepIntervalMs: 100 } };
    const [generating, other] = await instances.start(2, { chunks: () => 'word ' }, timings);
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const watcher = await other!.connect();
    await openThread(watcher, { threadId, patches: true });
    const { assistantNodeId } = await prompt(writer, threadId, 'Talk forever');
    const call = await generating!.model.call(0);
    call.release(3);
    await chunksReceived(watcher, assistantNodeId, 3);

    // Paused: the generating instance renews nothing and hears nothing of the thread.
    const lock = instances.cluster.liveLock(threadId)!;
    const paused = instances.cluster.members.get(lock.holder)!;
    const renewLock = paused.renewLock.bind(paused);
    paused.renewLock = (...args) => (args[1] === lock.token ? new Promise(() => {}) : renewLock(...args));
    const listener = [...instances.cluster.listeners.get(threadId)!].find((candidate) => candidate.member === paused)!;
    const deliver = listener.deliver;
    const unheard: Array<() => void> = [];
    listener.deliver = (message) => unheard.push(() => deliver(message));
    // Its lock expires meanwhile and passes to an instance that dies in turn: the other instance recovers the answer.
    instances.cluster.locks.delete(threadId);
    expect(await instances.cluster.join().acquireLock(threadId, 300)).toBeGreaterThan(lock.token);
    const halted = (await watcher.next('CPP_STREAM_HALTED')).payload;
    const recovered = await nextUpdate(
      watcher,
      threadId,
      (update) => update.nodes[assistantNodeId]?.status === 'interrupted',
    );

    // Resumed: its next chunk is refused, and its answer stops before it hears of the recovery.
    call.release(1);
    if (!call.signal.aborted) await once(call.signal, 'abort');
    for (const message of unheard.splice(0)) message();
    listener.deliver = deliver;

    const synced = await requestSync(watcher, threadId);
    expect(synced.nodes[assistantNodeId]).toEqual(recovered.nodes[assistantNodeId]);
    expect(recovered.nodes[assistantNodeId]!.content).toHaveLength(halted.finalContentLength);
    const haltedAt = watcher.frames.findIndex((frame) => frame.type === 'CPP_STREAM_HALTED');
    expect(watcher.frames.slice(haltedAt).filter((frame) => frame.type === 'CPP_STREAM_CHUNK')).toEqual([]);
    await nextUpdate(writer, threadId, (update) => update.nodes[assistantNodeId]?.status === 'interrupted');
    expect((await expectSoundStore(threadId)).nodes[assistantNodeId]).toEqual(recovered.nodes[assistantNodeId]);
  });

  it('stop an instance that lost its generation lock from writing; another instance recovers its answer once the lock expires', async () => {
    const timings = { clusterTimings: { lockTtlMs: 600, sweepIntervalMs: 100 } };
    const [generating, other] = await instances.start(2, { chunks: () => 'word ' }, timings);
    const writer = await generating!.connect();
    const { threadId } = await openThread(writer, { patches: true });
    const watcher = await other!.connect();
    await openThread(watcher, { threadId, patches: true });
    const exchange = await prompt(writer, threadId, 'Talk forever');
    const call = await generating!.model.call(0);
    call.release(3);
    await chunksReceived(watcher, exchange.assistantNodeId, 3);

    // Another instance takes the lock over, as if the generating instance had stalled past the lock's lifetime, then
    // dies.
    instances.cluster.locks.delete(threadId);
    expect(await instances.cluster.join().acquireLock(threadId, 300)).toBeGreaterThan(1);

    // The generating instance stops its answer.
    if (!call.signal.aborted) await once(call.signal, 'abort');
    for (const client of [watcher, writer]) {
      expect((await client.next('CPP_STREAM_HALTED')).payload).toMatchObject({
        interruptedNodeId: exchange.assistantNodeId,
        finalContentLength: 15,
        reason: 'shutdown',
      });
      await nextUpdate(client, threadId, (update) => update.nodes[exchange.assistantNodeId]?.status === 'interrupted');
    }
    const stored = await expectSoundStore(threadId);
    expect(stored.nodes[exchange.assistantNodeId]).toMatchObject({ status: 'interrupted', content: 'word word word ' });
    expect(mirrorOf(watcher.frames, threadId)).toEqual({ graph: stored, problems: [] });
    expect(mirrorOf(writer.frames, threadId)).toEqual({ graph: stored, problems: [] });
  });
});
