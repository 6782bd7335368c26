import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI = fileURLToPath(new URL('../../bin/cpp-chat.js', import.meta.url));
/** The config directory the chats of this test run see, where cpp-chat keeps its default identity. */
export const CONFIG_HOME = mkdtempSync(join(tmpdir(), 'cpp-chat-config-'));
process.once('exit', () => rmSync(CONFIG_HOME, { recursive: true, force: true }));

/** Collected text of one output stream, with a way to wait for something to appear in it. */
class OutputBuffer {
  text = '';
  private readonly waiters: Array<() => void> = [];

  append(chunk: string): void {
    this.text += chunk;
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once the text (from `from` on) matches; the test's timeout bounds the wait. */
  async until(pattern: RegExp | string, from = 0): Promise<string> {
    for (;;) {
      const rest = this.text.slice(from);
      if (typeof pattern === 'string' ? rest.includes(pattern) : pattern.test(rest)) return rest;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
}

/** cpp-chat, as built by `tsc -b`, running with piped stdin, stdout and stderr. */
export class ChatProcess {
  readonly stdout = new OutputBuffer();
  readonly stderr = new OutputBuffer();
  readonly exited: Promise<number | null>;
  private readonly child: ChildProcessWithoutNullStreams;

  constructor(args: string[]) {
    if (!existsSync(CLI)) throw new Error(`${CLI} is missing: build first (npx tsc -b)`);
    // Its identity file goes to a folder of the test run's, not to the user's ~/.config.
    this.child = spawn(process.execPath, [CLI, ...args], {
      stdio: 'pipe',
      env: { ...process.env, XDG_CONFIG_HOME: CONFIG_HOME },
    });
    this.child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.stdout.append(chunk));
    this.child.stderr.setEncoding('utf8').on('data', (chunk: string) => this.stderr.append(chunk));
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)));
  }

  type(line: string): void {
    this.child.stdin.write(`${line}\n`);
  }

  endInput(): void {
    this.child.stdin.end();
  }

  kill(): void {
    this.child.kill();
  }
}
