import type { CPPClient } from '@promethea/cpp-client';
import { isFinalToolCallState, type ThreadGraph, type ToolCall } from '@promethea/cpp-protocol';
import { useCallback, useMemo } from 'react';
import { currentBranch } from './branch.js';

/** A tool call of an answer on the branch on screen (PROTOCOL.md §26). */
export interface ToolCallEntry {
  /** The answer that made it. */
  nodeId: string;
  call: ToolCall;
  /**
   * What the call waits for from the person: `approval` (`approval-requested`: approve or deny it), `answer` (a call
   * of a client tool this client has no handler of: answer it), or nothing (it streams, runs, or has ended).
   */
  waitsFor: 'approval' | 'answer' | undefined;
}

export interface ToolCalls {
  /** Every tool call of the branch on screen, answer by answer, in the order the model made them. */
  calls: ToolCallEntry[];
  /** The calls that wait for the person (`waitsFor` set). */
  waiting: ToolCallEntry[];
  /** Approves a call that waits for approval: it runs (CPP_TOOL_APPROVAL). Settles once the server has taken it. */
  approve(entry: ToolCallEntry, reason?: string): Promise<void>;
  /** Denies it: it ends `output-denied`, unrun, and the model is told, with `reason` when given. */
  deny(entry: ToolCallEntry, reason?: string): Promise<void>;
  /**
   * Answers a call of a client tool with its output (a string as it is, anything else as its JSON) or its error
   * (CPP_TOOL_RESULT), for a page that runs the tool itself rather than through `useCPP`'s `tools`.
   */
  answer(entry: ToolCallEntry, result: { output: unknown } | { errorText: string }): Promise<void>;
}

/**
 * The tool calls of the branch on screen and what they wait for, with the person's answers to them. A client tool
 * the client runs by itself (given in `useCPP`'s `tools`) never waits for an answer here.
 */
export function useToolCalls(client: CPPClient | null, graph: ThreadGraph | undefined): ToolCalls {
  const calls = useMemo(() => {
    if (!graph) return [];
    return currentBranch(graph).flatMap(({ node }) =>
      (node.toolCalls ?? []).map((call) => ({
        nodeId: node.id,
        call,
        waitsFor: node.status === 'streaming' ? waitsFor(call, client) : undefined,
      })),
    );
  }, [graph, client]);
  const waiting = useMemo(() => calls.filter((entry) => entry.waitsFor !== undefined), [calls]);

  const threadId = graph?.threadId;
  const respond = useCallback(
    async ({ nodeId, call }: ToolCallEntry, approved: boolean, reason: string | undefined) => {
      if (client && threadId)
        await client.respondToToolCall({ threadId, nodeId, toolCallId: call.toolCallId, approved, reason });
    },
    [client, threadId],
  );
  const approve = useCallback((entry: ToolCallEntry, reason?: string) => respond(entry, true, reason), [respond]);
  const deny = useCallback((entry: ToolCallEntry, reason?: string) => respond(entry, false, reason), [respond]);
  const answer = useCallback(
    async ({ nodeId, call }: ToolCallEntry, result: { output: unknown } | { errorText: string }) => {
      if (client && threadId) await client.answerToolCall({ threadId, nodeId, toolCallId: call.toolCallId, ...result });
    },
    [client, threadId],
  );
  return { calls, waiting, approve, deny, answer };
}

function waitsFor(call: ToolCall, client: CPPClient | null): ToolCallEntry['waitsFor'] {
  if (isFinalToolCallState(call.state)) return undefined;
  if (call.state === 'approval-requested') return 'approval';
  const clientsCall = call.state === 'input-available' && call.runsOn === 'client';
  return clientsCall && !client?.handlesTool(call.toolName) ? 'answer' : undefined;
}
