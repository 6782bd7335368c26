import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

/** The built CLI: tests that run it need `npm run build` (which `npm test` does) first. */
const CLI = fileURLToPath(new URL('../../dist/cli/cpp-server.js', import.meta.url));

export interface CliServer {
  /** The WebSocket URL the CLI printed. */
  url: string;
  /** The child process's id. */
  pid: number;
  /** Ends the process with `signal` and waits for it to exit; resolves with its exit code or signal. */
  kill(signal: NodeJS.Signals): Promise<number | NodeJS.Signals>;
}

/** Runs `cpp-server` in a child process on a free port and waits for the line saying where it listens. */
export async function startCliServer(args: readonly string[]): Promise<CliServer> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` before this test`);
  const child = spawn(
    process.execPath,
    [CLI, '--port', '0', '--host', '127.0.0.1', '--no-ui', '--auth', 'claimed', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      output += `${line}\n`;
      const match = /^cpp-server listening on (ws:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]!);
    });
    exited.then(([code, signal]) =>
      reject(new Error(`cpp-server exited (${code ?? signal}) before listening:\n${output}`)),
    );
  });
  return {
    url,
    pid: child.pid!,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      const [code, exitSignal] = await exited;
      return code ?? exitSignal!;
    },
  };
}
