import { findInvariantViolations, newMessageId, type ServerFrame } from '@promethea/cpp-protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chunksReceived, openThread, prompt, requestSync, streamedText } from '../support/protocol-steps.js';
import type { RawClient } from '../support/raw-client.js';
import { useServer } from '../support/start-server.js';
import { connectAs } from './support/authenticate.js';
import { TestIdentity } from './support/did-key-identity.js';

const fixture = useServer();

/** What one writer's pivot came to: its branch in the tree, or the refusal PROTOCOL.md §29.6 names. */
type PivotOutcome = { applied: true } | { applied: false; code: string };

/**
 * docs/PROTOCOL.md §29.6: several writers pivot the answer they all watch, at the same moment. The first pivot applied
 * cuts it at that pivot's received length, and every member gets that one CPP_STREAM_HALTED; each other pivot is
 * refused (THREAD_BUSY while the winner's answer streams, CONFLICT when it carried the version the winner changed),
 * or, if the winner's answer had ended by then, branches under the cut node; the tree stays sound.
 */
describe('writers pivoting one streaming answer at once', () => {
  it('cut it once, at the first applied pivot, for everyone, and leave a sound tree', async () => {
    await fixture.start({ auth: 'did-key' });
    const run = async (writers: number, lags: number[], withVersion: boolean[]) => {
      const identities = Array.from({ length: writers }, () => TestIdentity.generate());
      const clients: RawClient[] = [];
      for (const identity of identities) clients.push(await connectAs(fixture, identity));
      const [owner] = clients as [RawClient, ...RawClient[]];
      const { threadId } = await openThread(owner, { patches: true });
      for (const identity of identities.slice(1)) {
        owner.send('CPP_MEMBER_ADD', { threadId, did: identity.did, role: 'writer' });
        await owner.next('CPP_MEMBERS');
      }
      for (const client of clients.slice(1)) await openThread(client, { threadId, patches: true });
      const answer = await prompt(owner, threadId, 'Explain spiking neural networks.', { expectedVersion: 0 });
      for (const client of clients) await chunksReceived(client, answer.assistantNodeId, 5);

      const pivots = clients.map((client, index) => {
        const held = streamedText(client, answer.assistantNodeId).length;
        const receivedContentLength = Math.max(0, held - (lags[index] ?? 0));
        const newBranchNodeId = newMessageId();
        client.send(
          'CPP_PIVOT_INIT',
          {
            activeThreadId: threadId,
            interruptedNodeId: answer.assistantNodeId,
            userPrompt: `Writer ${index} pivots.`,
            newBranchNodeId,
            receivedContentLength,
            ...(withVersion[index] ? { expectedVersion: 1 } : {}),
          },
          { id: `pivot-${index}` },
        );
        return { client, newBranchNodeId, receivedContentLength, id: `pivot-${index}` };
      });

      const outcomes = await Promise.all(
        pivots.map(async ({ client, newBranchNodeId, id }): Promise<PivotOutcome> => {
          const answered = await client.nextMatching(
            (frame): frame is ServerFrame =>
              (frame.type === 'CPP_ERROR' && frame.payload.refId === id) ||
              ((frame.type === 'CPP_GRAPH_PATCH' || frame.type === 'CPP_SYNC_GRAPH') &&
                frame.payload.nodes[newBranchNodeId] !== undefined),
            `the answer to ${id}`,
          );
          return answered.type === 'CPP_ERROR' ? { applied: false, code: answered.payload.code } : { applied: true };
        }),
      );

      const graph = await requestSync(owner, threadId);
      const cutNode = graph.nodes[answer.assistantNodeId]!;
      const winner = pivots.find((pivot) => pivot.newBranchNodeId === cutNode.childrenIds[0]);
      expect(winner, 'the first child of the cut node is a pivot of the writers').toBeDefined();
      expect(cutNode.status).toBe('interrupted');
      expect(cutNode.content.length).toBe(winner!.receivedContentLength);
      for (const client of clients) {
        const halts = client
          .all('CPP_STREAM_HALTED')
          .filter((frame) => frame.payload.interruptedNodeId === answer.assistantNodeId);
        expect(halts.map((frame) => frame.payload.finalContentLength)).toEqual([winner!.receivedContentLength]);
      }
      outcomes.forEach((outcome, index) => {
        const inTree = graph.nodes[pivots[index]!.newBranchNodeId] !== undefined;
        expect(outcome.applied).toBe(inTree);
        if (!outcome.applied) expect(['THREAD_BUSY', 'CONFLICT']).toContain(outcome.code);
      });
      expect(outcomes.filter((outcome) => outcome.applied).length).toBeGreaterThanOrEqual(1);
      expect(findInvariantViolations({ ...graph, nodes: graph.nodes })).toEqual([]);
      await Promise.all(clients.map((client) => client.close()));
    };

    await fc.assert(
      fc.asyncProperty(
        fc
          .integer({ min: 2, max: 6 })
          .chain((writers) =>
            fc.tuple(
              fc.constant(writers),
              fc.array(fc.nat({ max: 20 }), { minLength: writers, maxLength: writers }),
              fc.array(fc.boolean(), { minLength: writers, maxLength: writers }),
            ),
          ),
        ([writers, lags, withVersion]) => run(writers, lags, withVersion),
      ),
      { numRuns: 6 },
    );
  }, 120_000);
});
