import { newMessageId, newThreadId, type ServerFrame } from '@promethea/cpp-protocol';
import {
  CPPServer,
  LocalCluster,
  MemoryStore,
  type ClusterTransport,
  type ConversationStore,
  type CPPServerOptions,
} from '@promethea/cpp-server';
import { PostgresStore } from '@promethea/cpp-server/postgres';
import { RedisClusterTransport } from '@promethea/cpp-server/redis';
import { SqliteStore } from '@promethea/cpp-server/sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { TestIdentity } from '../auth/support/did-key-identity.js';
import { describeWithPostgres, TEST_DATABASE_URL, useTestSchemas } from '../support/postgres.js';
import { RawClient } from '../support/raw-client.js';
import { deleteRedisKeys, describeWithRedis, TEST_REDIS_URL, uniqueRedisPrefix } from '../support/redis.js';
import { ScriptedModel } from '../support/scripted-model.js';
import { temporaryDatabase } from '../support/temporary-database.js';

/**
 * docs/PROTOCOL.md §15.1: a client that sends its frames without waiting for the answers gets exactly what a client
 * that waits for each answer gets. Every sequence runs twice on the same servers, once waiting and once pipelined,
 * with fresh ids and a fresh identity each time, and the two transcripts (ids named, times left out) must be equal.
 * No answer streams any text (every model call waits for a release that never comes), so that a transcript depends
 * on the order the frames were applied in and on nothing else.
 */

/** The thread limit `cpp-server` runs with: the access check then looks the thread up before it opens it. */
const CLI_THREAD_LIMIT = { maxThreadsPerDid: 10_000 };

/** One frame of a sequence and how to recognise the end of its answer (none for CPP_THREAD_CLOSE). */
interface Step {
  /** The frame's `id`, also naming it in the error that may answer it. */
  id: string;
  type: string;
  payload: Record<string, unknown>;
  /** The thread the frame is about, by name; its answers belong to that thread's transcript. */
  thread?: string;
  answered?: (frame: ServerFrame) => boolean;
}

/** The ids of one run, by the names the sequences use: fresh ones per run, the server's own found in the frames. */
class RunIds {
  private readonly names = new Map<string, string>();
  private readonly ids = new Map<string, string>();

  /** The frames of every client of the run, where the server's ids show up. */
  constructor(private readonly received: ServerFrame[][]) {}

  private get frames(): ServerFrame[] {
    return this.received.flat();
  }

  thread(name: string): string {
    return this.id(name, newThreadId);
  }

  node(name: string): string {
    return this.id(name, newMessageId);
  }

  /** The server-generated id of the assistant node answering the user node `name`. */
  answerTo(name: string): string {
    const parentId = this.node(name);
    for (const frame of this.frames) {
      for (const node of nodesOf(frame)) if (node.role === 'assistant' && node.parentId === parentId) return node.id;
    }
    // What went wrong instead, for the failure to say: the frames refused so far.
    const errors = this.frames.flatMap((frame) =>
      frame.type === 'CPP_ERROR' ? [`${frame.payload.refId} ${frame.payload.code}: ${frame.payload.message}`] : [],
    );
    throw new Error(`no answer to ${name} received yet; refused so far: ${errors.join('; ') || 'nothing'}`);
  }

  /** The name of an id, generated ids named after what they answer. */
  nameOf(id: string): string {
    const known = this.names.get(id);
    if (known) return known;
    for (const frame of this.frames) {
      const answer = nodesOf(frame).find((node) => node.id === id);
      if (answer?.parentId) return `answer-to-${this.nameOf(answer.parentId)}`;
    }
    return id;
  }

  private id(name: string, generate: () => string): string {
    let id = this.ids.get(name);
    if (!id) {
      id = generate();
      this.ids.set(name, id);
      this.names.set(id, name);
    }
    return id;
  }
}

type Sequence = Array<(ids: RunIds) => Step[]>;

const open = (ids: RunIds, thread: string): Step => ({
  id: `open-${thread}`,
  type: 'CPP_THREAD_OPEN',
  payload: { threadId: ids.thread(thread), patches: true },
  thread,
  answered: (frame) => frame.type === 'CPP_SYNC_GRAPH' && frame.payload.threadId === ids.thread(thread),
});

const promptStep = (
  ids: RunIds,
  thread: string,
  node: string,
  fields: Record<string, unknown> = {},
  id = `prompt-${node}`,
): Step => ({
  id,
  type: 'CPP_PROMPT',
  payload: { activeThreadId: ids.thread(thread), userPrompt: `Prompt ${node}`, newNodeId: ids.node(node), ...fields },
  thread,
  answered: (frame) =>
    isUpdateOf(frame, ids.thread(thread)) && nodesOf(frame).some((candidate) => candidate.id === ids.node(node)),
});

const retryStep = (ids: RunIds, thread: string, node: string): Step => ({
  ...promptStep(ids, thread, node, {}, `retry-${node}`),
  answered: (frame) => frame.type === 'CPP_SYNC_GRAPH' && frame.payload.threadId === ids.thread(thread),
});

const stopStep = (ids: RunIds, thread: string, answering: string): Step => ({
  id: `stop-${answering}`,
  type: 'CPP_STREAM_STOP',
  payload: { activeThreadId: ids.thread(thread), nodeId: ids.answerTo(answering) },
  thread,
  answered: (frame) =>
    isUpdateOf(frame, ids.thread(thread)) &&
    nodesOf(frame).some((node) => node.id === ids.answerTo(answering) && node.status === 'interrupted'),
});

const pivotStep = (ids: RunIds, thread: string, answering: string, node: string): Step => ({
  id: `pivot-${node}`,
  type: 'CPP_PIVOT_INIT',
  payload: {
    activeThreadId: ids.thread(thread),
    interruptedNodeId: ids.answerTo(answering),
    userPrompt: `Pivot ${node}`,
    newBranchNodeId: ids.node(node),
  },
  thread,
  answered: (frame) =>
    isUpdateOf(frame, ids.thread(thread)) && nodesOf(frame).some((candidate) => candidate.id === ids.node(node)),
});

const anchorStep = (ids: RunIds, thread: string, node: string): Step => ({
  id: `anchor-${node}`,
  type: 'CPP_ANCHOR_HEAD',
  payload: { activeThreadId: ids.thread(thread), targetNodeId: ids.node(node) },
  thread,
  answered: (frame) => isUpdateOf(frame, ids.thread(thread)) && frame.payload.activeHeadMessageId === ids.node(node),
});

const syncStep = (ids: RunIds, thread: string): Step => ({
  id: `sync-${thread}`,
  type: 'CPP_SYNC_REQUEST',
  payload: { threadId: ids.thread(thread) },
  thread,
  answered: (frame) => frame.type === 'CPP_SYNC_GRAPH' && frame.payload.threadId === ids.thread(thread),
});

const closeStep = (ids: RunIds, thread: string): Step => ({
  id: `close-${thread}`,
  type: 'CPP_THREAD_CLOSE',
  payload: { threadId: ids.thread(thread) },
  thread,
});

const listStep = (id: string): Step => ({
  id,
  type: 'CPP_THREAD_LIST',
  payload: {},
  answered: (frame) => frame.type === 'CPP_THREADS',
});

/**
 * Phase by phase: the frames of a phase go out at once; the next phase may name the answers the previous one
 * started (a client only learns those ids from the server).
 */
const SEQUENCE: Sequence = [
  (ids) => [
    open(ids, 'A'),
    // Started by another client (on another server, in a cluster, where its answer streams).
    stopStep(ids, 'A', 'u0'),
    promptStep(ids, 'A', 'u1'),
    listStep('list-1'),
    open(ids, 'B'),
    promptStep(ids, 'B', 'u2'),
    promptStep(ids, 'A', 'u3'),
    retryStep(ids, 'A', 'u1'),
    promptStep(ids, 'B', 'u1', {}, 'reuse-u1'),
    anchorStep(ids, 'A', 'u1'),
    listStep('list-2'),
  ],
  (ids) => [
    promptStep(ids, 'A', 'u3', {}, 'busy-u3'),
    stopStep(ids, 'A', 'u1'),
    anchorStep(ids, 'A', 'u1'),
    promptStep(ids, 'A', 'u4'),
    retryStep(ids, 'A', 'u4'),
    stopStep(ids, 'B', 'u2'),
    closeStep(ids, 'B'),
    promptStep(ids, 'B', 'u5', { parentNodeId: ids.node('u2') }),
    promptStep(ids, 'A', 'u6', { expectedVersion: 2 }, 'stale-u6'),
  ],
  (ids) => [
    pivotStep(ids, 'A', 'u4', 'u7'),
    anchorStep(ids, 'A', 'u4'),
    promptStep(ids, 'A', 'u8', { parentNodeId: ids.node('u4') }),
    stopStep(ids, 'B', 'u5'),
    syncStep(ids, 'A'),
  ],
  (ids) => [
    stopStep(ids, 'A', 'u7'),
    promptStep(ids, 'A', 'u8', { parentNodeId: ids.node('u4') }, 'again-u8'),
    listStep('list-3'),
  ],
];

/** The frames refused for a waiting client: the sequence is not a string of successes. */
const EXPECTED_ERRORS = [
  'busy-u3 THREAD_BUSY',
  'prompt-u3 THREAD_BUSY',
  'prompt-u8 THREAD_BUSY',
  'reuse-u1 CONFLICT',
  'stale-u6 CONFLICT',
];

interface Transcript {
  /** Per thread name (and `connection` for the answers about none): the frames, ids named, times zeroed. */
  byThread: Record<string, unknown[]>;
  /** Which frames were refused, and why (in order per thread, within `byThread`). */
  errors: string[];
}

/** Two connections: one starts an answer in thread A, the other runs the sequence, waiting or pipelined. */
interface Connections {
  starter(did: string): Promise<RawClient>;
  client(did: string): Promise<RawClient>;
}

async function run(connections: Connections, pipelined: boolean): Promise<Transcript> {
  // An identity of its own per run, so that its thread lists hold its threads only.
  const did = TestIdentity.generate().did;
  const [starter, client] = [await connections.starter(did), await connections.client(did)];
  const ids = new RunIds([client.frames, starter.frames]);
  for (const step of [open(ids, 'A'), promptStep(ids, 'A', 'u0')]) {
    const before = starter.mark();
    send(starter, step);
    await answers(starter, before, [step]);
  }
  const steps: Step[] = [];
  for (const phase of SEQUENCE) {
    const sent = phase(ids);
    steps.push(...sent);
    const mark = client.mark();
    if (pipelined) {
      for (const step of sent) send(client, step);
      await answers(client, mark, sent);
    } else {
      for (const step of sent) {
        const before = client.mark();
        send(client, step);
        await answers(client, before, [step]);
      }
    }
  }
  await Promise.all([client.close(), starter.close()]);
  return transcriptOf(client.frames, steps, ids);
}

function send(client: RawClient, step: Step): void {
  client.send(step.type, step.payload, { id: step.id });
}

/** Waits until every step has its answer, in order within each thread, among the frames after `mark`. */
async function answers(client: RawClient, mark: number, steps: Step[]): Promise<void> {
  const complete = () => {
    const taken = new Set<number>();
    return steps.every((step) => {
      if (!step.answered) return true;
      const index = client.frames.findIndex(
        (frame, position) =>
          position >= mark && !taken.has(position) && (isErrorFor(frame, step) || step.answered!(frame)),
      );
      taken.add(index);
      return index >= 0;
    });
  };
  if (complete()) return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`unanswered: ${steps.map((step) => step.id).join(', ')}`)), 10_000);
    const check = () => {
      // The RawClient records the frame in its own listener, registered before this one.
      if (!complete()) return;
      clearTimeout(timer);
      client.socket.off('message', check);
      resolve();
    };
    client.socket.on('message', check);
  });
}

function transcriptOf(frames: ServerFrame[], steps: Step[], ids: RunIds): Transcript {
  const byThread: Record<string, unknown[]> = {};
  const errors: string[] = [];
  for (const frame of frames) {
    // A fresh nonce per connection.
    if (frame.type === 'CPP_AUTH_CHALLENGE') continue;
    let group = 'connection';
    if (frame.type === 'CPP_ERROR') {
      const step = steps.find((candidate) => candidate.id === frame.payload.refId);
      group = step?.thread ?? group;
      errors.push(`${frame.payload.refId} ${frame.payload.code}`);
    } else if ('threadId' in frame.payload && typeof frame.payload.threadId === 'string') {
      group = ids.nameOf(frame.payload.threadId);
    }
    (byThread[group] ??= []).push(named({ type: frame.type, payload: frame.payload }, ids));
  }
  // Threads are not ordered among themselves (§15.5).
  return { byThread, errors: errors.sort() };
}

/** The value with every id replaced by its name and every time by 0; thread lists sorted by name. */
function named(value: unknown, ids: RunIds): unknown {
  if (typeof value === 'string') return value.replace(/\b(?:msg|thread)_[A-Za-z0-9_-]+/g, (id) => ids.nameOf(id));
  if (Array.isArray(value)) {
    const items = value.map((item) => named(item, ids));
    // Threads updated in the same millisecond may list either way round.
    const threadIdOf = (item: unknown) =>
      typeof item === 'object' && item !== null && 'nodeCount' in item && 'threadId' in item
        ? String(item.threadId)
        : undefined;
    return items.every((item) => threadIdOf(item) !== undefined)
      ? items.sort((a, b) => threadIdOf(a)!.localeCompare(threadIdOf(b)!))
      : items;
  }
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      ids.nameOf(key),
      key === 'createdAt' || key === 'updatedAt' ? 0 : named(item, ids),
    ]),
  );
}

interface MessageNodeLike {
  id: string;
  parentId: string | null;
  role: string;
  status: string;
}

function nodesOf(frame: ServerFrame): MessageNodeLike[] {
  return frame.type === 'CPP_SYNC_GRAPH' || frame.type === 'CPP_GRAPH_PATCH'
    ? (Object.values(frame.payload.nodes) as MessageNodeLike[])
    : [];
}

function isUpdateOf(
  frame: ServerFrame,
  threadId: string,
): frame is Extract<ServerFrame, { type: 'CPP_SYNC_GRAPH' | 'CPP_GRAPH_PATCH' }> {
  return (frame.type === 'CPP_SYNC_GRAPH' || frame.type === 'CPP_GRAPH_PATCH') && frame.payload.threadId === threadId;
}

function isErrorFor(frame: ServerFrame, step: Step): boolean {
  return frame.type === 'CPP_ERROR' && frame.payload.refId === step.id;
}

/** Servers to run the sequence on: the waiting and the pipelined client each connect to the last one. */
function useServers() {
  let servers: CPPServer[] = [];
  let clients: RawClient[] = [];
  let cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    const [opened, started, pending] = [clients, servers, cleanups];
    [clients, servers, cleanups] = [[], [], []];
    await Promise.all(opened.map((client) => client.close()));
    for (const server of started) await server.close();
    for (const cleanup of pending) await cleanup();
    expect(opened.flatMap((client) => client.invalid)).toEqual([]);
  });
  return {
    /**
     * Starts one server per `cluster` entry (one alone without), all on `store`: the starter connects to the first,
     * the client to the last.
     */
    async start(
      store: ConversationStore,
      clusters: ClusterTransport[] = [],
      options: CPPServerOptions = {},
    ): Promise<Connections> {
      const started = await Promise.all(
        (clusters.length === 0 ? [undefined] : clusters).map(async (cluster) => {
          const server = new CPPServer({
            port: 0,
            host: '127.0.0.1',
            store,
            model: new ScriptedModel({ chunks: ['never released'] }),
            limits: CLI_THREAD_LIMIT,
            // Every node here lives: on a loaded machine one that renewed its lock late must not be taken for dead
            // and its answer recovered (a subject of local-cluster-instances.test.ts), which changes what clients get.
            ...(cluster ? { cluster, clusterTimings: { lockTtlMs: 60_000 } } : {}),
            ...options,
          });
          servers.push(server);
          await server.ready;
          return server;
        }),
      );
      const connect = async (server: CPPServer, did: string) => {
        const client = await RawClient.connect(server.url, { did });
        clients.push(client);
        return client;
      };
      return { starter: (did) => connect(started[0]!, did), client: (did) => connect(started.at(-1)!, did) };
    },
    afterServers(cleanup: () => Promise<void> | void) {
      cleanups.push(cleanup);
    },
  };
}

async function expectPipelinedAsWaiting(connections: Connections): Promise<void> {
  const waiting = await run(connections, false);
  expect(waiting.errors).toEqual(EXPECTED_ERRORS);
  // Several times: the orders that go wrong depend on how the store's latencies fall.
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const pipelined = await run(connections, true);
    expect(pipelined).toEqual(waiting);
  }
}

describe('a client that pipelines its frames gets what a client that waits gets', () => {
  const servers = useServers();

  it('with the store in memory', async () => {
    await expectPipelinedAsWaiting(await servers.start(new MemoryStore()));
  });

  it('with a SQLite file', async () => {
    const database = temporaryDatabase();
    const store = SqliteStore.open(database.path);
    servers.afterServers(async () => {
      await store.close();
      database.remove();
    });
    await expectPipelinedAsWaiting(await servers.start(store));
  });

  it('on servers of a LocalCluster, the client on another server than the one the answers stream on', async () => {
    const cluster = new LocalCluster();
    await expectPipelinedAsWaiting(await servers.start(new MemoryStore(), [cluster.join(), cluster.join()]));
  });
});

describeWithPostgres('a client that pipelines its frames, on PostgreSQL', () => {
  const schemas = useTestSchemas();
  const servers = useServers();

  it('gets what a client that waits gets', async () => {
    const store = await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema: schemas.create() });
    servers.afterServers(() => store.close());
    await expectPipelinedAsWaiting(await servers.start(store));
  });

  describeWithRedis('and servers sharing it through Redis', () => {
    it('gets what a client that waits gets', async () => {
      const prefix = uniqueRedisPrefix();
      const store = await PostgresStore.open({ connectionString: TEST_DATABASE_URL, schema: schemas.create() });
      const transports = [
        await RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }),
        await RedisClusterTransport.connect({ url: TEST_REDIS_URL, prefix }),
      ];
      servers.afterServers(async () => {
        for (const transport of transports) await transport.close();
        await store.close();
        await deleteRedisKeys(prefix);
      });
      await expectPipelinedAsWaiting(await servers.start(store, transports));
    });
  });
});
