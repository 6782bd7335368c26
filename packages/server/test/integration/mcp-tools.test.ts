import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import type { CPPServer, ModelProvider, ModelRequest, ModelStreamPart, McpServers } from '@promethea/cpp-server';
import { afterEach, describe, expect, it } from 'vitest';
import { completion, openThread, pivot, prompt } from '../support/protocol-steps.js';
import { RawClient } from '../support/raw-client.js';
import { startServer } from '../support/start-server.js';

const require = createRequire(import.meta.url);
const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A model that calls one tool with `input`, then answers with what the tool returned: the MCP servers' tools are what
 * is under test, not the model.
 */
function callingModel(toolName: string, input: unknown): ModelProvider & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    provider: 'scripted',
    model: 'caller',
    requests,
    async *stream(request): AsyncGenerator<ModelStreamPart> {
      requests.push(request);
      const last = request.messages.at(-1);
      if (last?.role === 'tool') {
        yield { type: 'text-delta', text: `The tool said: ${last.content}` };
      } else {
        yield { type: 'text-delta', text: 'Calling.' };
        const text = JSON.stringify(input);
        yield { type: 'tool-input-start', toolCallId: 'c1', toolName };
        yield { type: 'tool-input-delta', toolCallId: 'c1', delta: text };
        yield { type: 'tool-call', toolCallId: 'c1', toolName, input: text };
      }
      yield { type: 'finish', finishReason: 'stop' };
    },
  };
}

async function serve(model: ModelProvider, mcpServers: McpServers): Promise<{ server: CPPServer; client: RawClient }> {
  const server = await startServer({ model, mcpServers });
  cleanups.push(() => server.close());
  const client = await RawClient.connect(server.url);
  cleanups.push(async () => {
    await client.close();
    expect(client.invalid).toEqual([]);
  });
  return { server, client };
}

/** A free port of 127.0.0.1, for a server started as a process. */
async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as AddressInfo;
  probe.close();
  await once(probe, 'close');
  return port;
}

/** server-everything over Streamable HTTP, behind a proxy that records every JSON-RPC message the client posts. */
async function everythingOverHttp(): Promise<{ url: string; posted: Array<Record<string, unknown>> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  cleanups.push(() => {
    child.kill();
  });
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (data: Buffer) => {
      if (String(data).includes('listening')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code})`)));
  });
  const posted: Array<Record<string, unknown>> = [];
  const proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      if (incoming.method === 'POST' && body.length > 0) posted.push(JSON.parse(String(body)));
      const upstream = httpRequest(
        { host: '127.0.0.1', port, path: incoming.url, method: incoming.method, headers: incoming.headers },
        (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(outgoing);
        },
      );
      upstream.on('error', () => outgoing.destroy());
      upstream.end(body);
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  cleanups.push(() => {
    proxy.closeAllConnections();
    proxy.close();
  });
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`, posted };
}

describe('MCP servers', () => {
  it('stdio: lists server-everything’s tools for the model, and runs one for an answer', async () => {
    const model = callingModel('echo', { message: 'over stdio' });
    const { client } = await serve(model, { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } });
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Echo something');
    const { update } = await completion(client, threadId, assistantNodeId);

    const names = model.requests[0]?.tools?.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'trigger-long-running-operation']));
    const echo = model.requests[0]?.tools?.find((tool) => tool.name === 'echo');
    expect(echo?.inputSchema).toMatchObject({ properties: { message: { type: 'string' } } });
    expect(update.nodes[assistantNodeId]?.toolCalls).toEqual([
      expect.objectContaining({ toolName: 'echo', state: 'output-available', output: 'Echo: over stdio' }),
    ]);
    expect(update.nodes[assistantNodeId]?.content).toBe('Calling.The tool said: Echo: over stdio');
  });

  it('stdio: server-filesystem reads a file of the folder it is given', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'cpp-mcp-fs-'));
    cleanups.push(() => rmSync(folder, { recursive: true, force: true }));
    writeFileSync(join(folder, 'notes.txt'), 'Pivot while the tool runs.');
    const model = callingModel('read_text_file', { path: join(folder, 'notes.txt') });
    const { client } = await serve(model, { files: { command: process.execPath, args: [FILESYSTEM, folder] } });
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Read my notes');
    const { update } = await completion(client, threadId, assistantNodeId);

    expect(update.nodes[assistantNodeId]?.toolCalls?.[0]).toMatchObject({
      toolName: 'read_text_file',
      state: 'output-available',
      output: 'Pivot while the tool runs.',
    });
  });

  it('Streamable HTTP: a pivot during server-everything’s long operation sends notifications/cancelled for its call', async () => {
    const { url, posted } = await everythingOverHttp();
    const model = callingModel('trigger-long-running-operation', { duration: 60, steps: 60 });
    const { client } = await serve(model, { everything: { url } });
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Run the long operation');
    // The operation reports each step: pivot once it has reported one.
    await client.next('CPP_TOOL_CALL', (frame) => frame.payload.toolCall.progress !== undefined);

    const branch = await pivot(client, threadId, assistantNodeId, 'Never mind');

    expect(branch.update.nodes[assistantNodeId]?.toolCalls?.[0]).toMatchObject({
      toolName: 'trigger-long-running-operation',
      state: 'interrupted',
    });
    const call = posted.find((message) => message.method === 'tools/call');
    expect(call).toMatchObject({ params: { name: 'trigger-long-running-operation' } });
    await expect
      .poll(() => posted.find((message) => message.method === 'notifications/cancelled'))
      .toMatchObject({ params: { requestId: call?.id } });
  });

  it('a server that dies during a call ends the call in output-error, and the answer goes on', async () => {
    const dying = [
      "const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');",
      "const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');",
      "const server = new McpServer({ name: 'dying', version: '1.0.0' });",
      "server.registerTool('die', { description: 'Exits', inputSchema: {} }, async () => process.exit(1));",
      'await server.connect(new StdioServerTransport());',
    ].join('\n');
    const model = callingModel('die', {});
    const { client } = await serve(model, {
      dying: { command: process.execPath, args: ['--input-type=module', '-e', dying], cwd: process.cwd() },
    });
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Die');
    const { update } = await completion(client, threadId, assistantNodeId);
    expect(update.nodes[assistantNodeId]?.toolCalls?.[0]).toMatchObject({
      toolName: 'die',
      state: 'output-error',
      errorText: expect.stringMatching(/closed/i),
    });
    expect(update.nodes[assistantNodeId]?.content).toMatch(/^Calling\.The tool said: /);
  });

  it('a server that does not start is left out: the server starts, and an answer calling its tool is told so', async () => {
    const model = callingModel('echo', { message: 'nobody' });
    const server = await startServer({
      model,
      mcpServers: { broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } },
    });
    cleanups.push(() => server.close());
    const client = await RawClient.connect(server.url);
    cleanups.push(async () => {
      await client.close();
    });
    const { threadId } = await openThread(client, { patches: true });
    const { assistantNodeId } = await prompt(client, threadId, 'Echo');
    const { update } = await completion(client, threadId, assistantNodeId);
    expect(update.nodes[assistantNodeId]?.toolCalls?.[0]).toMatchObject({
      state: 'output-error',
      errorText: 'Unknown tool "echo". The tools are: none.',
    });
  });
});
