import { CPPClient } from '@promethea/cpp-client/node';
import { findInvariantViolations, type ThreadGraph } from '@promethea/cpp-protocol';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { SOAK_DID, type SoakSession } from './soak-session.js';

/** What the end-of-run checks found; every list is empty in a good run. */
export interface SoakFindings {
  threads: number;
  nodes: number;
  violations: string[];
  /** Clients whose copy of a thread differs from the server's. */
  mismatches: string[];
  /** Nodes still streaming where nothing should be. */
  streaming: string[];
}

/**
 * With every answer ended and every client connected: each thread as a fresh client gets it passes its
 * invariants, and every session's copy of it is exactly the same.
 */
export async function checkMirrors(url: string, sessions: SoakSession[]): Promise<SoakFindings> {
  const findings: SoakFindings = { threads: 0, nodes: 0, violations: [], mismatches: [], streaming: [] };
  const reference = new CPPClient({ endpoint: url, did: SOAK_DID, reconnect: false });
  try {
    const readers = new Map<string, SoakSession[]>();
    for (const session of sessions)
      for (const threadId of session.threadIds) readers.set(threadId, [...(readers.get(threadId) ?? []), session]);
    for (const [threadId, subscribed] of readers) {
      const truth = await reference.openThread(threadId);
      inspect(truth, `thread ${threadId}`, findings);
      for (const session of subscribed) {
        await session.client.ready();
        // A round trip: every frame the server sent this client before it answers has arrived.
        await session.client.listThreads();
        if (canonical(session.client.graph(threadId)) !== canonical(truth))
          findings.mismatches.push(`a client's copy of ${threadId}`);
      }
    }
  } finally {
    await reference.close();
  }
  return findings;
}

/** After the server shut down: every thread in the database file passes its invariants, and nothing streams. */
export async function checkDatabase(databasePath: string): Promise<SoakFindings> {
  const findings: SoakFindings = { threads: 0, nodes: 0, violations: [], mismatches: [], streaming: [] };
  const store = SqliteStore.open(databasePath);
  try {
    for (const { threadId } of await store.listThreads(SOAK_DID)) {
      const stored = await store.loadThread(threadId);
      if (stored) inspect(stored.graph, `stored thread ${threadId}`, findings);
    }
  } finally {
    await store.close();
  }
  return findings;
}

function inspect(graph: ThreadGraph, name: string, findings: SoakFindings): void {
  findings.threads += 1;
  findings.nodes += Object.keys(graph.nodes).length;
  findings.violations.push(...findInvariantViolations(graph).map((violation) => `${name}: ${violation}`));
  for (const node of Object.values(graph.nodes))
    if (node.status === 'streaming') findings.streaming.push(`${name}: ${node.id}`);
}

/** JSON with the keys of every object sorted, so that two equal graphs give the same text. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item && typeof item === 'object' && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );
}
