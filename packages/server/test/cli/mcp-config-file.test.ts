import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readMcpConfigFile } from '../../src/cli/mcp-config-file.js';

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

function configFile(content: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'cpp-mcp-config-'));
  folders.push(folder);
  const path = join(folder, 'mcp.json');
  writeFileSync(path, content);
  return path;
}

describe('cpp-server --mcp-config', () => {
  it('reads the mcpServers of a Claude Desktop or Cursor configuration: commands and URLs', async () => {
    const servers = {
      files: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/tmp'], env: { DEBUG: '1' } },
      remote: { url: 'https://mcp.example/mcp', headers: { authorization: 'Bearer token' } },
    };
    const path = configFile(JSON.stringify({ mcpServers: servers, globalShortcut: 'Ctrl+Space' }));
    expect(await readMcpConfigFile(path)).toEqual(servers);
  });

  it('refuses a file that is not JSON, or an entry that is neither a command nor a URL, in one line', async () => {
    const broken = configFile('{ "mcpServers": ');
    await expect(readMcpConfigFile(broken)).rejects.toThrow(/^The MCP configuration .* could not be read as JSON: /);
    const invalid = configFile(JSON.stringify({ mcpServers: { files: { args: ['x'] } } }));
    const error = await readMcpConfigFile(invalid).catch((thrown: Error) => thrown);
    expect(error?.message).toMatch(/^The MCP configuration .* is not valid: mcpServers\.files: /);
    expect(error?.message).not.toContain('\n');
  });
});
