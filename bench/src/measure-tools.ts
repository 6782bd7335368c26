import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CPP_SUBPROTOCOL, newMessageId } from '@promethea/cpp-protocol';
import { CPPServer, createModelProvider, MemoryStore } from '@promethea/cpp-server';
import { jsonSchema, stepCountIs, streamText, tool } from 'ai';
import type { BenchContext } from './bench-context.js';
import { BenchSocket } from './bench-socket.js';
import { clientFrame } from './cpp-frames.js';
import { figure, ratioTarget, type Figure } from './figure.js';
import { LatencyRecorder, median, type LatencySummary } from './latency-recorder.js';

/** Issue 33's bounds: a tool's round trip through CPP ÷ streamText's in process; a pivot's halt during a tool ÷ during text. */
const ROUND_TRIP_TARGET = 1.3;
const HALT_TARGET = 1.2;
/** What the prompt asks of the local model server: a call of `noop`, of `wait`, of the MCP server's `mcp_wait`, or text. */
const ASK = { noop: 'call noop', wait: 'call wait', mcp: 'call mcp_wait', text: 'talk' } as const;
/** The text model streams a token each this often until it is stopped: a pivot lands in the middle of it. */
const TEXT_TOKEN_MS = 2;
/** Chunks of the text answer the probe waits for before it pivots. */
const CHUNKS_BEFORE_PIVOT = 2;
const NO_INPUT = { type: 'object', properties: {}, additionalProperties: false } as const;

interface ToolsRun {
  /** Prompt → the answer's end, the model calling `noop` once, through CPP. */
  cppRoundTrip: LatencySummary;
  /** The same loop with the AI SDK's `streamText` in process. */
  streamTextRoundTrip: LatencySummary;
  /** Pivot → CPP_STREAM_HALTED while the server tool `wait` runs. */
  haltedDuringTool: LatencySummary;
  /** Pivot → CPP_STREAM_HALTED while the model streams text. */
  haltedDuringText: LatencySummary;
  /** Pivot sent → the MCP server's handler of the running call sees its cancellation (notifications/cancelled). */
  mcpCancelled: LatencySummary;
  /** The MCP SDK's client aborts its own call → the same handler sees the cancellation. */
  mcpDirectCancelled: LatencySummary;
}

/**
 * Measure 8 (issue 33): tool calls. In this process, against one local OpenAI-compatible model server: a tool's
 * round trip through a CPP server (WebSocket client → server → model asks → server tool `noop` → model answers)
 * against the same two-step loop with `streamText`; the halt of a pivot while a server tool runs against one while
 * the model streams text; and how soon an MCP server (Streamable HTTP) sees the cancellation of its running call,
 * against the MCP SDK's own client aborting the same call.
 */
export async function measureTools(context: BenchContext): Promise<{ figures: Figure[]; details: ToolsRun[] }> {
  const mcp = await startMcpServer();
  const model = await startModelServer();
  const cpp = new CPPServer({
    port: 0,
    host: '127.0.0.1',
    store: new MemoryStore(),
    model: createModelProvider({
      provider: 'openai-compatible',
      baseUrl: model.baseUrl,
      model: 'bench-model',
      maxRetries: 0,
    }),
    chunkIntervalMs: context.options.chunkIntervalMs,
    limits: { maxNodesPerThread: 0, maxThreadBytes: 0, framesPerSecond: 0, syncsPerMinute: 0 },
    tools: {
      noop: { description: 'Does nothing.', inputSchema: NO_INPUT, execute: () => 'ok' },
      wait: {
        description: 'Waits until stopped.',
        inputSchema: NO_INPUT,
        execute: (_input, { signal }) => aborted(signal),
      },
    },
    mcpServers: { bench: { url: mcp.url } },
  });
  await cpp.ready;
  const socket = await BenchSocket.connect(cpp.url, CPP_SUBPROTOCOL);
  const mcpClient = new Client({ name: 'bench', version: '1.0.0' });
  await mcpClient.connect(new StreamableHTTPClientTransport(new URL(mcp.url)));
  const provider = createOpenAICompatible({ name: 'bench', baseURL: model.baseUrl });
  const runs: ToolsRun[] = [];
  try {
    for (let run = 0; run < context.options.runs; run += 1) {
      context.log(`tools: run ${run + 1}/${context.options.runs}`);
      const recorders = {
        cppRoundTrip: new LatencyRecorder(),
        streamTextRoundTrip: new LatencyRecorder(),
        haltedDuringTool: new LatencyRecorder(),
        haltedDuringText: new LatencyRecorder(),
        mcpCancelled: new LatencyRecorder(),
        mcpDirectCancelled: new LatencyRecorder(),
      };
      const samples = context.options.gatewaySamples;
      const warmUp = Math.ceil(samples / 10);
      // In alternation, so that both sides of each ratio see the same machine.
      for (let index = 0; index < warmUp + samples; index += 1) {
        const cppMs = await cppRoundTrip(socket);
        const streamTextMs = await streamTextRoundTrip(provider);
        if (index >= warmUp) {
          recorders.cppRoundTrip.record(cppMs);
          recorders.streamTextRoundTrip.record(streamTextMs);
        }
      }
      for (let index = 0; index < warmUp + context.options.pivots; index += 1) {
        const toolMs = await pivotWhile(socket, 'wait');
        const textMs = await pivotWhile(socket, 'text');
        const mcpMs = await mcpCancellation(socket, mcp);
        const mcpDirectMs = await directMcpCancellation(mcpClient, mcp);
        if (index < warmUp) continue;
        recorders.mcpDirectCancelled.record(mcpDirectMs);
        recorders.haltedDuringTool.record(toolMs);
        recorders.haltedDuringText.record(textMs);
        recorders.mcpCancelled.record(mcpMs);
      }
      runs.push({
        cppRoundTrip: recorders.cppRoundTrip.summary(),
        streamTextRoundTrip: recorders.streamTextRoundTrip.summary(),
        haltedDuringTool: recorders.haltedDuringTool.summary(),
        haltedDuringText: recorders.haltedDuringText.summary(),
        mcpCancelled: recorders.mcpCancelled.summary(),
        mcpDirectCancelled: recorders.mcpDirectCancelled.summary(),
      });
    }
  } finally {
    socket.close();
    await mcpClient.close();
    await cpp.close();
    await model.close();
    await mcp.close();
  }
  return { figures: toolsFigures(runs), details: runs };
}

function toolsFigures(runs: ToolsRun[]): Figure[] {
  const p50 = (key: keyof ToolsRun) => median(runs.map((run) => run[key].p50));
  return [
    figure({
      id: 'tools.round-trip.p50',
      label: 'tool round trip (model asks → server tool runs a no-op → model answers), p50',
      unit: 'ms',
      value: p50('cppRoundTrip'),
      baseline: { label: "the same loop in process, the AI SDK's streamText", value: p50('streamTextRoundTrip') },
      target: ratioTarget('≤', ROUND_TRIP_TARGET),
    }),
    figure({
      id: 'tools.pivot.halted.p50',
      label: 'pivot while a server tool runs → HALTED, p50',
      unit: 'ms',
      value: p50('haltedDuringTool'),
      baseline: { label: 'pivot while the model streams text → HALTED', value: p50('haltedDuringText') },
      target: ratioTarget('≤', HALT_TARGET),
    }),
    figure({
      id: 'tools.pivot.mcp-cancelled.p50',
      label: 'pivot while an MCP call runs → the MCP server sees notifications/cancelled, p50',
      unit: 'ms',
      value: p50('mcpCancelled'),
      baseline: { label: "the MCP SDK's client aborting its own call", value: p50('mcpDirectCancelled') },
    }),
  ];
}

/** A new thread, a prompt that makes the model call `noop` once: CPP_PROMPT sent → CPP_STREAM_COMPLETED. */
async function cppRoundTrip(socket: BenchSocket): Promise<number> {
  const threadId = await openThread(socket);
  const completed = socket.next('CPP_STREAM_COMPLETED', (frame) => frame.payload.threadId === threadId);
  const start = performance.now();
  socket.send(clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: ASK.noop, newNodeId: newMessageId() }));
  return (await completed).receivedAt - start;
}

/** The same loop as the AI SDK runs it: two model calls, `noop` run between them, to the stream's end. */
async function streamTextRoundTrip(provider: ReturnType<typeof createOpenAICompatible>): Promise<number> {
  const start = performance.now();
  const result = streamText({
    model: provider.chatModel('bench-model'),
    messages: [{ role: 'user', content: ASK.noop }],
    tools: {
      noop: tool({ description: 'Does nothing.', inputSchema: jsonSchema(NO_INPUT), execute: async () => 'ok' }),
    },
    stopWhen: stepCountIs(8),
    maxRetries: 0,
  });
  await result.consumeStream({ onError: (error) => Promise.reject(error) });
  if ((await result.steps).length !== 2) throw new Error('streamText did not take the two steps of the loop');
  return performance.now() - start;
}

/**
 * A new thread whose answer is, at the moment of the pivot, running the server tool `wait` (`what: 'wait'`) or
 * streaming text: CPP_PIVOT_INIT sent → CPP_STREAM_HALTED. The new branch's answer (text) is stopped before the next.
 */
async function pivotWhile(socket: BenchSocket, what: 'wait' | 'text'): Promise<number> {
  const threadId = await openThread(socket);
  const ready =
    what === 'wait'
      ? socket.next(
          'CPP_TOOL_CALL',
          (frame) => frame.payload.threadId === threadId && frame.payload.toolCall.state === 'input-available',
        )
      : chunks(socket, threadId, CHUNKS_BEFORE_PIVOT);
  socket.send(
    clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: ASK[what], newNodeId: newMessageId() }),
  );
  const nodeId = (await ready).frame.payload.nodeId;
  const halted = socket.next('CPP_STREAM_HALTED', (frame) => frame.payload.threadId === threadId);
  const branched = newBranchChunk(socket, threadId, nodeId);
  const start = performance.now();
  socket.send(pivotFrame(threadId, nodeId));
  const elapsed = (await halted).receivedAt - start;
  await stopThread(socket, threadId, branched);
  return elapsed;
}

/** As `pivotWhile`, the call running on the MCP server: CPP_PIVOT_INIT sent → its handler's signal aborted. */
async function mcpCancellation(socket: BenchSocket, mcp: McpBench): Promise<number> {
  const threadId = await openThread(socket);
  const running = mcp.nextCall();
  const ready = socket.next(
    'CPP_TOOL_CALL',
    (frame) => frame.payload.threadId === threadId && frame.payload.toolCall.state === 'input-available',
  );
  socket.send(clientFrame('CPP_PROMPT', { activeThreadId: threadId, userPrompt: ASK.mcp, newNodeId: newMessageId() }));
  const nodeId = (await ready).frame.payload.nodeId;
  const { cancelled } = await running;
  const branched = newBranchChunk(socket, threadId, nodeId);
  const start = performance.now();
  socket.send(pivotFrame(threadId, nodeId));
  const elapsed = (await cancelled) - start;
  await stopThread(socket, threadId, branched);
  return elapsed;
}

function pivotFrame(threadId: string, nodeId: string) {
  return clientFrame('CPP_PIVOT_INIT', {
    activeThreadId: threadId,
    interruptedNodeId: nodeId,
    userPrompt: ASK.text,
    newBranchNodeId: newMessageId(),
  });
}

async function openThread(socket: BenchSocket): Promise<string> {
  const synced = socket.next('CPP_SYNC_GRAPH');
  socket.send(clientFrame('CPP_THREAD_OPEN', { patches: true }));
  return (await synced).frame.payload.threadId;
}

/** The first chunk of the pivot's new branch: of an answer of the thread other than the one pivoted from. */
function newBranchChunk(socket: BenchSocket, threadId: string, pivotedFrom: string) {
  return socket.next(
    'CPP_STREAM_CHUNK',
    (frame) => frame.payload.threadId === threadId && frame.payload.nodeId !== pivotedFrom,
  );
}

/** Stops the pivot's new branch once it streams (`branched`, its first chunk), and closes the thread. */
async function stopThread(
  socket: BenchSocket,
  threadId: string,
  branched: ReturnType<typeof newBranchChunk>,
): Promise<void> {
  const { nodeId } = (await branched).frame.payload;
  const halted = socket.next('CPP_STREAM_HALTED', (frame) => frame.payload.threadId === threadId);
  socket.send(clientFrame('CPP_STREAM_STOP', { activeThreadId: threadId, nodeId }));
  await halted;
  socket.send(clientFrame('CPP_THREAD_CLOSE', { threadId }));
}

/** The thread's `count`-th chunk from now on. */
function chunks(socket: BenchSocket, threadId: string, count: number) {
  let seen = 0;
  return socket.next('CPP_STREAM_CHUNK', (frame) => frame.payload.threadId === threadId && ++seen >= count);
}

function aborted(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) =>
    signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
  );
}

interface LocalServer {
  close(): Promise<void>;
}

/**
 * A local OpenAI-compatible chat-completions server: a prompt `call X` is answered with a call of the tool X (its
 * input `{}`, in two pieces) until the request holds the call's result, then with a short text; `talk` with a token
 * every TEXT_TOKEN_MS until the client goes. Both CPP's provider and `streamText` ask it.
 */
async function startModelServer(): Promise<LocalServer & { baseUrl: string }> {
  const server = createServer((request, response) => {
    if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions'))
      return void response.writeHead(404).end();
    void readJson(request).then((body) => answer(body as ChatRequest, response));
  });
  await listen(server);
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, close: () => close(server) };
}

interface ChatRequest {
  messages: Array<{ role: string; content?: unknown }>;
}

async function answer(request: ChatRequest, response: ServerResponse): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const prompt = [...request.messages].reverse().find((message) => message.role === 'user')?.content;
  const called = request.messages.at(-1)?.role === 'tool';
  const toolName = typeof prompt === 'string' && prompt.startsWith('call ') ? prompt.slice('call '.length) : undefined;
  if (toolName && !called) {
    const call = (args: string, extra: object = {}) => ({
      index: 0,
      ...extra,
      function: { ...('id' in extra ? { name: toolName } : {}), arguments: args },
    });
    response.write(
      chunk({ role: 'assistant', tool_calls: [call('{', { id: `call_${randomUUID()}`, type: 'function' })] }),
    );
    response.write(chunk({ tool_calls: [call('}')] }));
    response.end(`${chunk({}, 'tool_calls')}data: [DONE]\n\n`);
    return;
  }
  if (toolName || prompt !== ASK.text) {
    response.write(chunk({ role: 'assistant', content: 'Done' }));
    response.end(`${chunk({ content: '.' })}${chunk({}, 'stop')}data: [DONE]\n\n`);
    return;
  }
  response.write(chunk({ role: 'assistant', content: 'Once' }));
  let gone = false;
  response.once('close', () => void (gone = true));
  while (!gone) {
    await sleep(TEXT_TOKEN_MS);
    response.write(chunk({ content: ' upon a time' }));
  }
}

function chunk(delta: object, finishReason: string | null = null): string {
  const body = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'bench-model' };
  return `data: ${JSON.stringify({ ...body, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`;
}

interface McpBench extends LocalServer {
  url: string;
  /** Resolves when the next call of `mcp_wait` has begun, with a promise of the moment it was cancelled. */
  nextCall(): Promise<{ cancelled: Promise<number> }>;
}

/**
 * An MCP server over Streamable HTTP, a session per client (CPP's, and the baseline's own MCP client), whose tool
 * `mcp_wait` runs until its request is cancelled; the moment its handler's signal aborts is what is timed, in this
 * process's clock.
 */
async function startMcpServer(): Promise<McpBench> {
  let waiting: ((call: { cancelled: Promise<number> }) => void) | undefined;
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: McpServer[] = [];
  const newSession = async () => {
    const mcp = new McpServer({ name: 'bench', version: '1.0.0' });
    mcp.registerTool('mcp_wait', { description: 'Waits until cancelled.' }, (extra) => {
      const cancelled = new Promise<number>((resolve) =>
        extra.signal.addEventListener('abort', () => resolve(performance.now()), { once: true }),
      );
      waiting?.({ cancelled });
      waiting = undefined;
      return cancelled.then(() => ({ content: [{ type: 'text' as const, text: 'cancelled' }] }));
    });
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, transport),
    });
    await mcp.connect(transport);
    servers.push(mcp);
    return transport;
  };
  const server = createServer((request, response) => {
    const body = request.method === 'POST' ? readJson(request) : Promise.resolve(undefined);
    const id = request.headers['mcp-session-id'];
    const session = typeof id === 'string' ? sessions.get(id) : undefined;
    void Promise.all([body, session ?? newSession()]).then(([parsed, transport]) =>
      transport.handleRequest(request, response, parsed),
    );
  });
  await listen(server);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    nextCall: () => new Promise((resolve) => void (waiting = resolve)),
    close: async () => {
      for (const mcp of servers) await mcp.close();
      await close(server);
    },
  };
}

/** The baseline of the MCP figure: the MCP SDK's own client calls `mcp_wait` and aborts the call. */
async function directMcpCancellation(client: Client, mcp: McpBench): Promise<number> {
  const running = mcp.nextCall();
  const controller = new AbortController();
  // Aborted, the call rejects: handled now, since the cancellation is awaited first.
  const call = client
    .callTool({ name: 'mcp_wait', arguments: {} }, undefined, { signal: controller.signal })
    .catch(() => undefined);
  const { cancelled } = await running;
  const start = performance.now();
  controller.abort();
  const elapsed = (await cancelled) - start;
  await call;
  return elapsed;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
