#!/usr/bin/env node
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { CPPClient, fileIdentity } from '../node.js';
import { ChatSession, type ChatOutput } from './chat-session.js';
import { defaultIdentityFile } from './identity-file.js';

const USAGE = [
  'usage: cpp-chat URL [--identity FILE | --did DID] [--thread ID]',
  `  --identity FILE  the did:key identity proven to the server, created (mode 0600) if missing; default ${defaultIdentityFile()}`,
  '  --did DID        claim DID without proving it, for a server run with --auth claimed',
].join('\n');

const output: ChatOutput = {
  write: (text) => process.stdout.write(text),
  error: (text) => process.stderr.write(text),
};

/** A terminal client: each line is a prompt, or a pivot while an answer streams; commands start with '/'. */
async function main(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { identity: { type: 'string' }, did: { type: 'string' }, thread: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  const [endpoint] = positionals;
  if (values.help || endpoint === undefined || positionals.length > 1 || (values.did !== undefined && values.identity !== undefined)) {
    output.error(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }

  // A dropped connection ends the chat (and says so) rather than reconnecting behind the person's back.
  const who = values.did === undefined ? { identity: await fileIdentity(values.identity ?? defaultIdentityFile()) } : { did: values.did };
  const client = new CPPClient({ endpoint, reconnect: false, ...who });
  const session = new ChatSession(client, output);
  client.on('error', (error) => session.report(error));
  const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
  let leaving = false;
  client.on('status', (status) => {
    if (status !== 'closed' || leaving) return;
    output.error('connection closed\n');
    lines.close();
  });

  try {
    await session.open(values.thread);
    let quit = false;
    for await (const line of lines) {
      quit = !(await session.handle(line));
      if (quit) break;
    }
    if (client.status === 'closed') return 1;
    // Input ended (a pipe, or Ctrl-D): let the answers finish. /quit leaves at once.
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
