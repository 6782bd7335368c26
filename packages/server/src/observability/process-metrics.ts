import type { Registry } from 'prom-client';
import { promClient } from './prom-client.js';

let registry: Registry | undefined;

/**
 * prom-client's process metrics (CPU, memory, GC, event-loop delay), collected once per process: each collection
 * starts its own event-loop monitor and GC observer, which several servers in one process must not multiply.
 */
export function processMetrics(): Registry {
  if (!registry) {
    const { Registry, collectDefaultMetrics } = promClient();
    registry = new Registry();
    collectDefaultMetrics({ register: registry });
  }
  return registry;
}
