import { z } from 'zod';

/** An MCP server run as a process speaking stdio, as Claude Desktop's and Cursor's `mcpServers` entries write it. */
const StdioServerSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: z.record(z.string(), z.string()).optional(),
  cwd: z.string().optional(),
});

/** An MCP server reached over Streamable HTTP, at its URL. */
const HttpServerSchema = z.object({
  url: z.url(),
  headers: z.record(z.string(), z.string()).optional(),
});

export const McpServerConfigSchema = z.union([StdioServerSchema, HttpServerSchema]);
export type McpServerConfig = z.infer<typeof McpServerConfigSchema>;

/** MCP servers by name: the `mcpServers` object of a Claude Desktop or Cursor configuration file. */
export const McpServersSchema = z.record(z.string().min(1), McpServerConfigSchema);
export type McpServers = z.infer<typeof McpServersSchema>;

/** A configuration file of that shape: `{ "mcpServers": { … } }` (other fields are the other tools' own). */
export const McpConfigFileSchema = z.object({ mcpServers: McpServersSchema });
