import { ErrorCode, findInvariantViolations } from '@promethea/cpp-protocol';
import { DemoProvider, MemoryStore } from '@promethea/cpp-server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { soakSize } from '../../../../test/support/soak-size.js';
import { UNPROVEN_MAX_MESSAGE_BYTES } from '../../src/auth/connection-guard.js';
import { completion, openThread, prompt } from '../support/protocol-steps.js';
import { useServer } from '../support/start-server.js';
import { connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';
import { FuzzConnection, type EdgeError } from './fuzz/fuzz-connection.js';
import { batchOf } from './fuzz/fuzz-recipes.js';
import { FrameRenderer, type IdPools } from './fuzz/fuzz-wire.js';

/**
 * How many frames to send: a sample of 10,000 in `npm test`, 100,000 under `npm run test:soak`, CPP_FUZZ_FRAMES=1000000
 * for a long run. CPP_FUZZ_SEED replays a run (fast-check prints the seed of a failing one).
 */
const FRAMES = soakSize('CPP_FUZZ_FRAMES', { sample: 10_000, full: 100_000 });
const SEED = process.env.CPP_FUZZ_SEED === undefined ? undefined : Number(process.env.CPP_FUZZ_SEED);
const BATCH = 100;
const MAX_FRAME_BYTES = 16 * 1024;
/** The close codes docs/PROTOCOL.md §18.3 gives for what the fuzzer sends. */
const DOCUMENTED_CLOSES = new Set([1007, 1009, 4401]);

const fixture = useServer();

interface Lane {
  identity: TestIdentity | undefined;
  connection: FuzzConnection;
}

describe('the server under random and mutated frames', () => {
  it(`stays up, answers each bad frame as documented, and keeps every tree sound (${FRAMES} frames)`, async () => {
    const store = new MemoryStore();
    const server = await fixture.start({
      auth: 'did-key',
      store,
      // Answers long enough to be pivoted and stopped mid-stream, short enough to end between batches.
      model: new DemoProvider({ delayMs: 1, words: 12 }),
      maxFrameBytes: MAX_FRAME_BYTES,
      // The fuzzer floods on purpose (frames, and syncs of the same threads), and one of its connections never
      // authenticates; small prompts and threads so that those limits are met too.
      limits: { framesPerSecond: 0, syncsPerMinute: 0, authTimeoutMs: 0, maxPromptLength: 30, maxNodesPerThread: 40 },
    });
    const failures: unknown[] = [];
    server.on('error', (error) => failures.push(error));
    const identities = [TestIdentity.generate(), TestIdentity.generate(), TestIdentity.generate()];
    const pools: IdPools = { threadIds: [], nodeIds: [], threadOfNode: new Map() };
    const renderer = new FrameRenderer(pools, MAX_FRAME_BYTES);
    const lanes: Lane[] = [];
    for (const identity of [...identities, identities[0], undefined])
      lanes.push({ identity, connection: await FuzzConnection.open(server.url, pools, identity) });
    const retired: FuzzConnection[] = [];
    const closes: number[] = [];

    await fc.assert(
      fc.asyncProperty(batchOf(BATCH), fc.nat(), async (batch, laneIndex) => {
        const lane = lanes[laneIndex % lanes.length]!;
        const expected: EdgeError[] = [];
        let closing: number | undefined;
        for (const recipe of batch) {
          const { frame, expected: expectation } = renderer.render(
            recipe,
            lane.identity ? undefined : UNPROVEN_MAX_MESSAGE_BYTES,
          );
          lane.connection.send(frame);
          if (expectation.kind === 'edge-error')
            expected.push({
              code: expectation.code,
              refId: expectation.refId,
            });
          if (expectation.kind === 'close') {
            closing = expectation.code;
            break;
          }
        }
        if (closing === undefined) await lane.connection.sync();
        else closes.push(await lane.connection.closed);
        expect(lane.connection.takeEdgeErrors()).toEqual(expected);
        if (closing !== undefined) {
          expect(closes.at(-1)).toBe(closing);
          retired.push(lane.connection);
          lane.connection = await FuzzConnection.open(server.url, pools, lane.identity);
        }
      }),
      { numRuns: Math.ceil(FRAMES / BATCH), seed: SEED },
    );

    const connections = [...retired, ...lanes.map((lane) => lane.connection)];
    await Promise.all(lanes.map((lane) => lane.connection.sync()));
    expect(connections.flatMap((connection) => connection.invalidFrames)).toEqual([]);
    const otherCodes = new Set(connections.flatMap((connection) => connection.otherErrors.map((error) => error.code)));
    expect(otherCodes.has(ErrorCode.INTERNAL)).toBe(false);
    expect([...closes].filter((code) => !DOCUMENTED_CLOSES.has(code))).toEqual([]);
    expect(failures).toEqual([]);

    // Still up: a new connection proves itself, and a prompt is answered to its end.
    const client = await connectAs(fixture, identities[1]!);
    const { threadId } = await openThread(client);
    await completion(client, threadId, (await prompt(client, threadId, 'Still there?')).assistantNodeId);

    await Promise.all(lanes.map((lane) => lane.connection.close()));
    let threads = 0;
    for (const identity of identities) {
      for (const summary of await store.listThreads(identity.did, { limit: 200 })) {
        const stored = await store.loadThread(summary.threadId);
        expect(findInvariantViolations(stored!.graph), summary.threadId).toEqual([]);
        threads += 1;
      }
    }
    expect(threads).toBeGreaterThan(1);
    // A long run reaches every answer a decodable frame can get here, or the fuzzer has lost its aim.
    if (FRAMES >= 50_000) {
      expect([...otherCodes]).toEqual(
        expect.arrayContaining([
          'CONFLICT',
          'FORBIDDEN',
          'NOT_FOUND',
          'NOT_STREAMING',
          'RATE_LIMITED',
          'THREAD_BUSY',
          'UNAUTHORIZED',
        ]),
      );
    }
  }, 600_000);
});
