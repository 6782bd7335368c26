import type { MessageNode } from '@promethea/cpp-protocol';
import fc from 'fast-check';
import type { ThreadDriver } from './thread-driver.js';

/**
 * What a client and a model can do to a thread, with targets as abstract picks that `applyOperation` resolves
 * against the nodes that exist at that moment, so that every generated sequence is valid.
 */
export type Operation =
  | { kind: 'prompt'; parentPick: number | null; text: string }
  | { kind: 'pivot'; pick: number; keep: number; seen: string; text: string }
  | { kind: 'anchor'; pick: number }
  | {
      kind: 'finish';
      pick: number;
      status: 'completed' | 'interrupted' | 'failed';
      content: string;
      withUsage: boolean;
    }
  | { kind: 'stream'; pick: number; content: string }
  | { kind: 'regenerate'; pick: number; keep: number }
  | { kind: 'delete'; pick: number };

const pick = fc.nat({ max: 1_000 });
const text = fc.string({ maxLength: 12 });

export const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  fc.record({ kind: fc.constant('prompt' as const), parentPick: fc.option(pick, { nil: null }), text }),
  fc.record({ kind: fc.constant('pivot' as const), pick, keep: pick, seen: text, text }),
  fc.record({ kind: fc.constant('anchor' as const), pick }),
  fc.record({
    kind: fc.constant('finish' as const),
    pick,
    status: fc.constantFrom('completed' as const, 'interrupted' as const, 'failed' as const),
    content: text,
    withUsage: fc.boolean(),
  }),
  // Also aims at finished nodes: a late batch that the store must ignore.
  fc.record({ kind: fc.constant('stream' as const), pick, content: text }),
  fc.record({ kind: fc.constant('regenerate' as const), pick, keep: pick }),
  fc.record({ kind: fc.constant('delete' as const), pick }),
);

/** Applies one operation through the driver; an operation with no possible target does nothing. */
export async function applyOperation(driver: ThreadDriver, operation: Operation): Promise<void> {
  const nodes = Object.values(driver.graph.nodes);
  const assistants = nodes.filter((node) => node.role === 'assistant');
  switch (operation.kind) {
    case 'prompt': {
      const parent = operation.parentPick === null ? undefined : choose(nodes, operation.parentPick);
      await driver.prompt(operation.text, parent ? { parentNodeId: parent.id } : {});
      return;
    }
    case 'pivot': {
      const target = choose(assistants, operation.pick);
      if (!target) return;
      // The clients may have seen more than was persisted, or less.
      const cut =
        target.status === 'streaming'
          ? target.content.slice(0, operation.keep % (target.content.length + 1)) + operation.seen
          : undefined;
      await driver.pivot(target.id, cut, operation.text);
      return;
    }
    case 'anchor': {
      const target = choose(nodes, operation.pick);
      if (target) await driver.anchor(target.id);
      return;
    }
    case 'finish': {
      const target = choose(
        assistants.filter((node) => node.status === 'streaming'),
        operation.pick,
      );
      if (!target) return;
      const usage = operation.withUsage
        ? { usage: { inputTokens: operation.pick, outputTokens: operation.content.length } }
        : {};
      await driver.finish({ nodeId: target.id, status: operation.status, content: operation.content, ...usage });
      return;
    }
    case 'stream': {
      const target = choose(assistants, operation.pick);
      if (target) await driver.stream(target.id, operation.content);
      return;
    }
    case 'regenerate': {
      const target = choose(
        nodes.filter((node) => node.role === 'user'),
        operation.pick,
      );
      if (!target) return;
      const streaming = nodes.find((node) => node.status === 'streaming');
      if (streaming && streaming.parentId !== target.id) return;
      const halted = streaming && {
        nodeId: streaming.id,
        content: streaming.content.slice(0, operation.keep % (streaming.content.length + 1)),
      };
      await driver.regenerate(target.id, halted);
      return;
    }
    case 'delete': {
      const target = choose(
        nodes.filter((node) => node.parentId !== null && !streamsUnder(driver, node)),
        operation.pick,
      );
      if (target) await driver.deleteBranch(target.id);
      return;
    }
  }
}

function streamsUnder(driver: ThreadDriver, node: MessageNode): boolean {
  return (
    node.status === 'streaming' ||
    node.childrenIds.some((childId) => streamsUnder(driver, driver.graph.nodes[childId]!))
  );
}

function choose(nodes: MessageNode[], index: number): MessageNode | undefined {
  return nodes.length === 0 ? undefined : nodes[index % nodes.length];
}
