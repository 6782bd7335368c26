import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig, McpServers } from './mcp-config.js';
import type { ServerTools } from './server-tool.js';
import type { ToolRegistry } from './tool-registry.js';

/** How long a server has to start and list its tools before the CPP server goes on without it. */
const CONNECT_TIMEOUT_MS = 30_000;

/** The client's name in MCP's `initialize`. */
const CLIENT_INFO = { name: 'cpp-server', version: '1.0.0' };

/**
 * The MCP servers of a CPP server (docs/PROTOCOL.md §26.7), each a client session whose tools the registry offers
 * under their own names: listed at start and again on `notifications/tools/list_changed`. A call runs as the
 * server's `tools/call`, its progress reported; the call's signal (a halt, the timeout) cancels the request, which
 * sends `notifications/cancelled`. A server that fails to start, or dies, leaves its tools' calls failing with an
 * `output-error`, never a stuck answer.
 */
export class McpTools {
  private constructor(private readonly clients: Map<string, Client>) {}

  static async connect(
    servers: McpServers,
    registry: ToolRegistry,
    onError: (error: unknown, server: string) => void,
  ): Promise<McpTools> {
    const clients = new Map<string, Client>();
    await Promise.all(
      Object.entries(servers).map(async ([name, config]) => {
        try {
          clients.set(name, await connectServer(name, config, registry, (error) => onError(error, name)));
        } catch (error) {
          onError(error, name);
        }
      }),
    );
    return new McpTools(clients);
  }

  /** Ends every session: a stdio server's process is stopped. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.clients.values()].map((client) => client.close()));
  }
}

async function connectServer(
  name: string,
  config: McpServerConfig,
  registry: ToolRegistry,
  onError: (error: unknown) => void,
): Promise<Client> {
  const client = new Client(CLIENT_INFO, { capabilities: {} });
  client.onerror = onError;
  const source = `mcp:${name}`;
  const relist = async (): Promise<void> => {
    const { tools } = await client.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS });
    const offered: ServerTools = {};
    for (const tool of tools) {
      offered[tool.name] = {
        ...(tool.description ? { description: tool.description } : {}),
        inputSchema: tool.inputSchema,
        execute: (input, { signal, reportProgress }) =>
          callTool(
            client,
            tool.name,
            input as Record<string, unknown>,
            signal,
            reportProgress,
            registry.limits.timeoutMs,
          ),
      };
    }
    const left = registry.offer(source, offered);
    if (left.length > 0)
      onError(new Error(`MCP server ${name}: tools left out, their names taken: ${left.join(', ')}`));
  };
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => relist().catch(onError));
  // A server that dies takes its tools with it; a call in flight fails with the connection.
  client.onclose = () => registry.offer(source, {});
  await client.connect(transportOf(config), { timeout: CONNECT_TIMEOUT_MS });
  await relist();
  return client;
}

function transportOf(config: McpServerConfig): Transport {
  if ('url' in config) {
    return new StreamableHTTPClientTransport(
      new URL(config.url),
      config.headers ? { requestInit: { headers: config.headers } } : undefined,
    );
  }
  return new StdioClientTransport({
    command: config.command,
    args: config.args ?? [],
    ...(config.env ? { env: { ...inheritedEnvironment(), ...config.env } } : {}),
    ...(config.cwd ? { cwd: config.cwd } : {}),
    // The server's own log is its own: kept out of the CPP server's output.
    stderr: 'ignore',
  });
}

/** What a server started with its own `env` still gets of the CPP server's: the PATH to find its runtime. */
function inheritedEnvironment(): Record<string, string> {
  const { PATH, HOME } = process.env;
  return { ...(PATH ? { PATH } : {}), ...(HOME ? { HOME } : {}) };
}

async function callTool(
  client: Client,
  name: string,
  input: Record<string, unknown>,
  signal: AbortSignal,
  reportProgress: (progress: { progress: number; total?: number; message?: string }) => void,
  timeoutMs: number,
): Promise<string> {
  const result = await client.callTool({ name, arguments: input }, undefined, {
    signal,
    onprogress: ({ progress, total, message }) =>
      reportProgress({
        progress,
        ...(total !== undefined ? { total } : {}),
        ...(message !== undefined ? { message } : {}),
      }),
    // The registry's timeout aborts `signal`; the SDK's own is set past it so that one clock decides.
    timeout: timeoutMs * 2,
  });
  const text = resultText(result);
  if (result.isError) throw new Error(text || `the MCP tool ${name} failed`);
  return text;
}

/** A call's result as text: its text content, the other kinds of content as JSON, or its structured content. */
function resultText(result: Awaited<ReturnType<Client['callTool']>>): string {
  const content = Array.isArray(result.content) ? (result.content as Array<{ type: string; text?: string }>) : [];
  const parts = content.map((item) =>
    item.type === 'text' && typeof item.text === 'string' ? item.text : JSON.stringify(item),
  );
  if (parts.length > 0) return parts.join('\n');
  return result.structuredContent === undefined ? '' : JSON.stringify(result.structuredContent);
}
