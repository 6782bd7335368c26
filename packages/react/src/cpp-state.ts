import type { CPPClient } from '@promethea/cpp-client';
import type { ThreadGraph } from '@promethea/cpp-protocol';

export type ConnectionStatus = CPPClient['status'];

/** What a component renders from a client: a consistent snapshot, replaced (never mutated) on every change. */
export interface CPPState {
  status: ConnectionStatus;
  /** The thread the client last opened. */
  threadId: string | undefined;
  /** That thread's conversation tree, once the server has sent it. */
  graph: ThreadGraph | undefined;
}
