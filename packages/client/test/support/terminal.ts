import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { CLI, CONFIG_HOME } from './chat-process.js';

const tmux = promisify(execFile);
const EXIT_STATUS = /^\[exit (\d+)\]$/;

/**
 * cpp-chat in a pseudo-terminal of its own (a detached tmux session, on a tmux server of this test run's), typed into
 * key by key as a person would, its screen read back as the rows the person sees.
 */
export class ChatTerminal {
  private static started = 0;
  private readonly name = 'chat';
  private readonly socket = `cpp-chat-test-${process.pid}-${ChatTerminal.started++}`;

  static async start(args: string[], size = { columns: 60, rows: 20 }): Promise<ChatTerminal> {
    const terminal = new ChatTerminal();
    const command = `${[process.execPath, CLI, ...args].map(quoted).join(' ')}; echo "[exit $?]"`;
    await terminal.tmux(
      'new-session',
      '-d',
      '-s',
      terminal.name,
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      '-e',
      `XDG_CONFIG_HOME=${CONFIG_HOME}`,
      '-e',
      'NO_COLOR=1',
      command,
    );
    // The screen stays readable after cpp-chat exits, for the test to see how it left.
    await terminal.tmux('set-option', '-t', terminal.name, 'remain-on-exit', 'on');
    return terminal;
  }

  /** Types text without pressing Enter. */
  async type(text: string): Promise<void> {
    await this.tmux('send-keys', '-t', this.name, '-l', text);
  }

  /** Types a line and presses Enter. */
  async enter(line: string): Promise<void> {
    await this.type(line);
    await this.press('Enter');
  }

  /** Presses keys by their tmux names: Enter, C-c, C-d, … */
  async press(...keys: string[]): Promise<void> {
    await this.tmux('send-keys', '-t', this.name, ...keys);
  }

  /** The visible rows, trailing spaces and trailing empty rows removed. */
  async screen(): Promise<string[]> {
    const { stdout } = await this.tmux('capture-pane', '-p', '-t', this.name);
    const rows = stdout.split('\n').map((row) => row.trimEnd());
    while (rows.length > 0 && rows.at(-1) === '') rows.pop();
    return rows;
  }

  /** Resolves with the screen once it satisfies `test`; the test's timeout bounds the wait. */
  async until(test: (rows: string[]) => boolean): Promise<string[]> {
    for (;;) {
      const rows = await this.screen();
      if (test(rows)) return rows;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Resolves with cpp-chat's exit status once it has exited (the shell that ran it writes it below). */
  async exited(): Promise<number> {
    const rows = await this.until((screen) => screen.some((row) => EXIT_STATUS.test(row)));
    return Number(EXIT_STATUS.exec(rows.find((row) => EXIT_STATUS.test(row))!)![1]);
  }

  async close(): Promise<void> {
    await this.tmux('kill-server').catch(() => undefined);
  }

  private tmux(...args: string[]) {
    return tmux('tmux', ['-L', this.socket, '-f', '/dev/null', ...args]);
  }
}

function quoted(argument: string): string {
  return `'${argument.replace(/'/g, `'\\''`)}'`;
}
