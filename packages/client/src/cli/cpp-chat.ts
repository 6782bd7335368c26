#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { CPPClient, fileIdentity } from '../node.js';
import { PlainOutput, type ChatOutput } from './chat-output.js';
import { ChatSession } from './chat-session.js';
import { defaultIdentityFile } from './identity-file.js';
import { TerminalScreen } from './terminal-screen.js';

const USAGE = [
  'usage: cpp-chat URL [--identity FILE | --did DID] [--thread ID]',
  `  --identity FILE  the did:key identity proven to the server, created (mode 0600) if missing; default ${defaultIdentityFile()}`,
  '  --did DID        claim DID without proving it, for a server run with --auth claimed',
].join('\n');

/**
 * A terminal client: each line is a prompt, or a pivot while an answer streams; commands start with '/'. On a
 * terminal the line being typed stays below the streaming answer (TerminalScreen); with pipes, plain text.
 */
async function main(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      identity: { type: 'string' },
      did: { type: 'string' },
      thread: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [endpoint] = positionals;
  if (
    values.help ||
    endpoint === undefined ||
    positionals.length > 1 ||
    (values.did !== undefined && values.identity !== undefined)
  ) {
    process.stderr.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }

  const interactive = process.stdin.isTTY && process.stdout.isTTY;
  const lines = createInterface({
    input: process.stdin,
    crlfDelay: Infinity,
    ...(interactive ? { output: process.stdout, terminal: true } : {}),
  });
  const screen = interactive ? new TerminalScreen(lines, process.stdout) : undefined;
  const output: ChatOutput = screen ?? new PlainOutput(process.stdout, process.stderr);
  // Before anything else hears the line: readline has moved below it, and the screen must know at once.
  if (screen) lines.on('line', () => screen.submitted());

  // A dropped connection ends the chat (and says so) rather than reconnecting behind the person's back.
  const who =
    values.did === undefined
      ? { identity: await fileIdentity(values.identity ?? defaultIdentityFile()) }
      : { did: values.did };
  const client = new CPPClient({ endpoint, reconnect: false, ...who });
  const session = new ChatSession(client, output);
  client.on('error', (error) => session.report(error));
  let leaving = false;
  client.on('status', (status) => {
    if (status !== 'closed' || leaving) return;
    output.error('connection closed');
    lines.close();
  });
  // Ctrl-C stops the answer that streams; with none, it leaves.
  lines.on('SIGINT', () => (session.answering ? void session.stop() : lines.close()));

  try {
    await session.open(values.thread);
    let quit = false;
    for await (const line of lines) {
      quit = !(await session.handle(line));
      if (quit) break;
    }
    if (client.status === 'closed') return 1;
    // Input ended (a pipe, Ctrl-D or Ctrl-C): let the answers finish. /quit leaves at once.
    if (!quit) await session.settle();
    return 0;
  } catch (error) {
    session.report(error);
    return 1;
  } finally {
    leaving = true;
    lines.close();
    await client.close();
  }
}

process.exitCode = await main(process.argv.slice(2));
