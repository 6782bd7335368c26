import { readFile } from 'node:fs/promises';
import { McpConfigFileSchema, type McpServers } from '../tools/mcp-config.js';
import { describeIssue } from './models-file.js';

/**
 * The MCP servers of a configuration file in the shape Claude Desktop and Cursor use, `{ "mcpServers": { … } }`
 * (`cpp-server --mcp-config FILE`). A file that cannot be read or is not of that shape is refused in one line.
 */
export async function readMcpConfigFile(path: string): Promise<McpServers> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new Error(
      `The MCP configuration ${path} could not be read as JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const parsed = McpConfigFileSchema.safeParse(json);
  if (!parsed.success) {
    throw new Error(`The MCP configuration ${path} is not valid: ${parsed.error.issues.map(describeIssue).join('; ')}`);
  }
  return parsed.data.mcpServers;
}
