import type { ConversationStore } from '../store/conversation-store.js';
import type { ReadinessCheck } from './readiness.js';

/** A well-formed node id that no client can have used: the probe's look-up finds nothing, and changes nothing. */
const PROBE_NODE_ID = 'msg_readiness-probe';

/**
 * The store answers: a read by primary key, which goes through the same connection (file, pool) as every other
 * operation, so it works for every adapter without a method of its own.
 */
export function storeReachable(store: ConversationStore): ReadinessCheck {
  return async () => {
    await store.findNodeThread(PROBE_NODE_ID);
  };
}
