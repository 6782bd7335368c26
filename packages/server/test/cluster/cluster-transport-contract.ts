import { EventEmitter, once } from 'node:events';
import { newThreadId, type ErrorCode } from '@promethea/cpp-protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type {
  ClusterHandlers,
  ClusterTransport,
  CommandReply,
  ForwardedCommand,
  SentCommand,
  ThreadMessage,
} from '../../src/cluster/cluster-transport.js';
import { eventually } from '../support/eventually.js';

export interface ClusterUnderTest {
  /** A new instance of one cluster, not started yet. */
  join(): Promise<ClusterTransport>;
  /** After the test, once every instance it joined is closed. */
  cleanup(): Promise<void>;
}

const TTL_MS = 10_000;
/** Short enough to wait out, long enough for a round trip on a busy machine. */
const SHORT_TTL_MS = 300;

/** What every ClusterTransport must do, run against each adapter (like the ConversationStore contract). */
export function describeClusterTransportContract(name: string, createCluster: () => Promise<ClusterUnderTest>): void {
  describe(`${name}: the ClusterTransport contract`, () => {
    let cluster: ClusterUnderTest | undefined;
    const instances: ClusterTransport[] = [];
    const errors: unknown[] = [];

    const instance = async (handlers: Partial<ClusterHandlers> = {}): Promise<ClusterTransport> => {
      cluster ??= await createCluster();
      const transport = await cluster.join();
      instances.push(transport);
      await transport.start({
        command: async () => ({ ok: true, retried: false, version: 1 }),
        error: (error) => errors.push(error),
        reconnected: () => {},
        ...handlers,
      });
      return transport;
    };

    const collect = async (transport: ClusterTransport, threadId: string) => {
      const received: ThreadMessage[] = [];
      const arrivals = new EventEmitter();
      const subscription = await transport.subscribe(threadId, (message) => {
        received.push(message);
        arrivals.emit('message');
      });
      /** Resolves once `count` messages have arrived. */
      const until = async (count: number) => {
        while (received.length < count) await once(arrivals, 'message');
      };
      return { received, subscription, until };
    };

    afterEach(async () => {
      for (const transport of instances.splice(0)) await transport.close();
      await cluster?.cleanup();
      cluster = undefined;
      expect(errors.splice(0)).toEqual([]);
    });

    describe('messages of a thread', () => {
      it('reach every other subscribed instance in the order published, and never their publisher', async () => {
        const [publisher, first, second] = [await instance(), await instance(), await instance()];
        const threadId = newThreadId();
        const own = await collect(publisher, threadId);
        const [one, two] = [await collect(first, threadId), await collect(second, threadId)];
        const messages = Array.from(
          { length: 20 },
          (_, index): ThreadMessage =>
            index === 3 ? { frame: `frame ${index}`, title: 'A title' } : { frame: `frame ${index}` },
        );

        for (const message of messages) publisher.publish(threadId, message);

        await Promise.all([one.until(20), two.until(20)]);
        expect(one.received).toEqual(messages);
        expect(two.received).toEqual(messages);
        expect(own.received).toEqual([]);
      });

      it('stop reaching an instance once it unsubscribes, and never reach instances of other threads', async () => {
        const [publisher, listener] = [await instance(), await instance()];
        const [threadId, otherThreadId] = [newThreadId(), newThreadId()];
        const kept = await collect(listener, threadId);
        const dropped = await collect(listener, threadId);
        const other = await collect(listener, otherThreadId);
        await dropped.subscription.unsubscribe();

        publisher.publish(threadId, { frame: 'after' });

        await kept.until(1);
        expect(dropped.received).toEqual([]);
        expect(other.received).toEqual([]);
      });
    });

    describe('streamed text', () => {
      const chunk = (part: 'content' | 'reasoning', delta: string) => ({ nodeId: 'msg_streamed', part, delta });

      it('is the deltas appended so far, in order, for any instance, each part apart', async () => {
        const [writer, reader] = [await instance(), await instance()];
        const threadId = newThreadId();
        const token = (await writer.acquireLock(threadId, TTL_MS))!;
        const streamed = [
          ...['Plan', ': greet.'].map((delta) => chunk('reasoning', delta)),
          ...['Hello', ', ', 'wörld 🚀'].map((delta) => chunk('content', delta)),
        ];
        for (const delta of streamed)
          expect(await writer.streamChunk(threadId, token, delta, { frame: '' })).toBe(true);

        expect(await reader.readText('msg_streamed', 'content')).toBe('Hello, wörld 🚀');
        expect(await reader.readText('msg_streamed', 'reasoning')).toBe('Plan: greet.');
        expect(await reader.readText('msg_unknown', 'content')).toBe('');
      });

      it('goes out with its chunk, in order with the other messages, only while the lock is held with its token', async () => {
        const [stalled, survivor, reader] = [await instance(), await instance(), await instance()];
        const threadId = newThreadId();
        const heard = await collect(reader, threadId);
        const token = (await stalled.acquireLock(threadId, SHORT_TTL_MS))!;
        expect(await stalled.streamChunk(threadId, token, chunk('content', 'Hello'), { frame: 'chunk 1' })).toBe(true);
        stalled.publish(threadId, { frame: 'after chunk 1' });
        await heard.until(2);
        // Paused past the lock's lifetime: another instance takes the answer over meanwhile, and ends it.
        await eventually(
          async () => ((await survivor.lockHolder(threadId)) === undefined ? true : undefined),
          'the lock expired',
        );
        const takeover = (await survivor.acquireLock(threadId, TTL_MS))!;
        await survivor.releaseLock(threadId, takeover);

        expect(await stalled.streamChunk(threadId, token, chunk('content', ', late'), { frame: 'chunk 2' })).toBe(
          false,
        );

        survivor.publish(threadId, { frame: 'the end' });
        await heard.until(3);
        expect(heard.received.map((message) => ('frame' in message ? message.frame : message))).toEqual([
          'chunk 1',
          'after chunk 1',
          'the end',
        ]);
        expect(await reader.readText('msg_streamed', 'content')).toBe('Hello');
      });
    });

    describe('generation locks', () => {
      it('admit one instance at a time, with a greater fencing token for each new holder', async () => {
        const [first, second] = [await instance(), await instance()];
        const threadId = newThreadId();

        const token = await first.acquireLock(threadId, TTL_MS);
        expect(token).toBeTypeOf('number');
        expect(await second.acquireLock(threadId, TTL_MS)).toBeUndefined();
        expect(await second.lockHolder(threadId)).toBe(first.instanceId);
        await second.releaseLock(threadId, token!);
        expect(await second.lockHolder(threadId)).toBe(first.instanceId);

        await first.releaseLock(threadId, token!);
        expect(await first.lockHolder(threadId)).toBeUndefined();
        const next = await second.acquireLock(threadId, TTL_MS);
        expect(next).toBeGreaterThan(token!);
        expect(await first.lockHolder(threadId)).toBe(second.instanceId);
        expect(await first.orphanedGenerations()).toEqual([]);
      });

      it('expire unless renewed: the thread is orphaned, and an instance that took it over makes the old holder lose it', async () => {
        const [dying, survivor] = [await instance(), await instance()];
        const threadId = newThreadId();
        const token = (await dying.acquireLock(threadId, SHORT_TTL_MS))!;
        expect(await dying.renewLock(threadId, token, SHORT_TTL_MS)).toBe(true);

        await eventually(
          async () => ((await survivor.lockHolder(threadId)) === undefined ? true : undefined),
          'the lock expired',
        );
        expect(await survivor.orphanedGenerations()).toContain(threadId);
        const takeover = await survivor.acquireLock(threadId, TTL_MS);

        expect(takeover).toBeGreaterThan(token);
        expect(await dying.renewLock(threadId, token, TTL_MS)).toBe(false);
        await dying.releaseLock(threadId, token);
        expect(await dying.lockHolder(threadId)).toBe(survivor.instanceId);
        await survivor.releaseLock(threadId, takeover!);
        expect(await survivor.orphanedGenerations()).not.toContain(threadId);
      });

      it('tell who holds them and for how long; once expired, who let them expire; nothing once released', async () => {
        const [holder, other] = [await instance(), await instance()];
        const threadId = newThreadId();
        expect(await other.lockLease(threadId)).toBeUndefined();

        const token = (await holder.acquireLock(threadId, TTL_MS))!;
        const lease = await other.lockLease(threadId);
        expect(lease).toMatchObject({ holder: holder.instanceId });
        const expiresInMs = lease && 'expiresInMs' in lease ? lease.expiresInMs : -1;
        expect(expiresInMs).toBeGreaterThan(0);
        expect(expiresInMs).toBeLessThanOrEqual(TTL_MS);
        await holder.releaseLock(threadId, token);
        expect(await other.lockLease(threadId)).toBeUndefined();

        await holder.acquireLock(threadId, SHORT_TTL_MS);
        await eventually(
          async () => ((await other.lockHolder(threadId)) === undefined ? true : undefined),
          'the lock expired',
        );
        expect(await other.lockLease(threadId)).toEqual({ holder: holder.instanceId, expired: true });
        const takeover = (await other.acquireLock(threadId, TTL_MS))!;
        expect(await holder.lockLease(threadId)).toMatchObject({ holder: other.instanceId });
        await other.releaseLock(threadId, takeover);
      });

      it('are taken back by their holder when they expired and nobody took them since', async () => {
        const [stalled, other] = [await instance(), await instance()];
        const threadId = newThreadId();
        const token = (await stalled.acquireLock(threadId, SHORT_TTL_MS))!;
        await eventually(
          async () => ((await other.lockHolder(threadId)) === undefined ? true : undefined),
          'the lock expired',
        );

        expect(await stalled.renewLock(threadId, token, TTL_MS)).toBe(true);

        expect(await other.lockHolder(threadId)).toBe(stalled.instanceId);
        expect(await other.acquireLock(threadId, TTL_MS)).toBeUndefined();
        await stalled.releaseLock(threadId, token);
        expect(await other.orphanedGenerations()).not.toContain(threadId);
      });
    });

    describe('forwarded commands', () => {
      /** A command about a thread whose lock `holder` takes now. */
      const commandHeldBy = async (holder: ClusterTransport): Promise<ForwardedCommand> => {
        const threadId = newThreadId();
        await holder.acquireLock(threadId, TTL_MS);
        return { threadId, frame: '{"type":"CPP_STREAM_STOP"}', identity: { did: 'did:key:z6Mk', verified: false } };
      };
      const replyOf = async (sent: Promise<SentCommand | undefined>) => (await sent)?.reply;

      it("run on the instance holding their thread's lock, which answers with an acknowledgement or an error", async () => {
        const received: ForwardedCommand[] = [];
        const answers: CommandReply[] = [
          { ok: true, retried: true, version: 1 },
          { ok: false, code: 'NOT_STREAMING' as ErrorCode, message: 'node msg_x is completed, not streaming' },
        ];
        const owner = await instance({
          command: async (forwarded) => {
            received.push(forwarded);
            return answers[received.length - 1]!;
          },
        });
        const [sender, bystander] = [await instance(), await instance()];
        const first = await commandHeldBy(owner);
        // Without an identity: only a pivot carries one.
        const second = { threadId: (await commandHeldBy(owner)).threadId, frame: '{}' };

        const sent = await sender.sendToLockHolder(first, TTL_MS);
        expect(sent?.holder).toBe(owner.instanceId);
        expect(await sent?.reply).toEqual(answers[0]);
        expect(await replyOf(bystander.sendToLockHolder(second, TTL_MS))).toEqual(answers[1]);
        expect(received).toEqual([first, second]);
      });

      it("are not sent when nobody holds their thread's lock, or the sender does", async () => {
        const received: ForwardedCommand[] = [];
        const owner = await instance({
          command: async (forwarded) => {
            received.push(forwarded);
            return { ok: true, retried: false, version: 1 };
          },
        });
        const sender = await instance();
        const command = await commandHeldBy(owner);

        expect(await owner.sendToLockHolder(command, TTL_MS)).toBeUndefined();
        expect(await sender.sendToLockHolder({ ...command, threadId: newThreadId() }, TTL_MS)).toBeUndefined();
        // Only the command sent while another instance held the lock reached it.
        expect(await replyOf(sender.sendToLockHolder(command, TTL_MS))).toEqual({
          ok: true,
          retried: false,
          version: 1,
        });
        expect(received).toEqual([command]);
      });

      it('run side by side: one that waits does not hold up the next', async () => {
        let release!: () => void;
        let started!: () => void;
        const running = new Promise<void>((resolve) => (started = resolve));
        const slowThreadId = newThreadId();
        const owner = await instance({
          command: async (forwarded) => {
            if (forwarded.threadId === slowThreadId) {
              started();
              await new Promise<void>((resolve) => (release = resolve));
            }
            return { ok: true, retried: false, version: 1 };
          },
        });
        const sender = await instance();
        await owner.acquireLock(slowThreadId, TTL_MS);

        const slow = replyOf(sender.sendToLockHolder({ threadId: slowThreadId, frame: '{}' }, TTL_MS));
        expect(await replyOf(sender.sendToLockHolder(await commandHeldBy(owner), TTL_MS))).toEqual({
          ok: true,
          retried: false,
          version: 1,
        });
        await running;
        release();
        expect(await slow).toEqual({ ok: true, retried: false, version: 1 });
      });

      it('resolve undefined when their instance does not answer in time', async () => {
        const silent = await instance({ command: () => new Promise<CommandReply>(() => {}) });
        const [sender, gone] = [await instance(), await instance()];
        const [unanswered, orphaned] = [await commandHeldBy(silent), await commandHeldBy(gone)];
        await gone.close();

        expect(await replyOf(sender.sendToLockHolder(unanswered, SHORT_TTL_MS))).toBeUndefined();
        expect(await replyOf(sender.sendToLockHolder(orphaned, SHORT_TTL_MS))).toBeUndefined();
      });

      it('resolve undefined as soon as their sender gives up, without waiting for the timeout', async () => {
        const silent = await instance({ command: () => new Promise<CommandReply>(() => {}) });
        const sender = await instance();
        const command = await commandHeldBy(silent);
        const giveUp = new AbortController();

        const sent = await sender.sendToLockHolder(command, 3_600_000, giveUp.signal);
        giveUp.abort();

        expect(await sent?.reply).toBeUndefined();
        expect(await sender.sendToLockHolder(command, 3_600_000, giveUp.signal)).toBeUndefined();
      });
    });

    it('answers the readiness check', async () => {
      await expect((await instance()).check()).resolves.toBeUndefined();
    });
  });
}
