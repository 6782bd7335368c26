import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The built CLI: `npx tsc -b` (which `npm test` runs) makes it. */
const CLI = fileURLToPath(new URL('../../../dist/cli/cpp-server.js', import.meta.url));

export interface CliProcess {
  /** The WebSocket URL from the banner. */
  url: string;
  /** `http://127.0.0.1:<port>`. */
  httpUrl: string;
  /** Every line the process wrote so far, stdout and stderr. */
  lines: string[];
  /**
   * SIGTERM, then waits for the exit and the end of its output; resolves with the exit code. Call it after a round
   * trip with the server: until then the CLI may not handle SIGTERM yet, and would die mid-banner.
   */
  stop(): Promise<number | null>;
}

/**
 * Runs `cpp-server` on a free port with a fresh SQLite file, `args` and the extra `env`, and waits until it
 * listens. Its whole output is kept, to be searched for what must (not) be logged.
 */
export async function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliProcess> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npx tsc -b\` before this test`);
  const folder = mkdtempSync(join(tmpdir(), 'cpp-cli-'));
  const child = spawn(
    process.execPath,
    [
      CLI,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--no-ui',
      '--auth',
      'claimed',
      '--db',
      join(folder, 'cpp.sqlite'),
      ...args,
    ],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // 'close', not 'exit': the output is read to its end.
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => lines.push(line));
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      const match = /^cpp-server listening on (ws:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]!);
    });
    exited.then(([code]) => reject(new Error(`cpp-server exited (${code}) before listening:\n${lines.join('\n')}`)));
  });
  return {
    url,
    httpUrl: new URL(url).origin.replace(/^ws/, 'http'),
    lines,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const [code] = await exited;
      rmSync(folder, { recursive: true, force: true });
      return code;
    },
  };
}
