import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { serveRequests } from './bench-process.js';

export interface ModelServerReady {
  baseUrl: string;
}

/**
 * How long the model "thinks" before its first token, in ms (the first argument; default 0: at once). A hosted model
 * takes hundreds of milliseconds; 0 leaves only what CPP adds.
 */
const FIRST_TOKEN_DELAY_MS = Number(process.argv[2] ?? 0);

/** Tokens of each answer after the first. */
const FOLLOWING_TOKENS = 7;
/** The pause before each of them, in ms (the second argument; default 1). */
const TOKEN_PAUSE_MS = Number(process.argv[3] ?? 1);

/**
 * A local OpenAI-compatible chat-completions server that answers at once: the first token leaves as soon as the
 * request is read, so the time to first token through CPP minus the time straight from here is what CPP adds.
 */
const server = createServer((request, response) => {
  if (request.method !== 'POST' || !request.url?.endsWith('/chat/completions')) {
    response.writeHead(404).end();
    return;
  }
  request.resume();
  request.once('end', () => void answer(response));
});

async function answer(response: ServerResponse): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (FIRST_TOKEN_DELAY_MS > 0) await sleep(FIRST_TOKEN_DELAY_MS);
  response.write(
    event({ choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] }),
  );
  for (let token = 0; token < FOLLOWING_TOKENS; token += 1) {
    await sleep(TOKEN_PAUSE_MS);
    response.write(event({ choices: [{ index: 0, delta: { content: ` word${token}` }, finish_reason: null }] }));
  }
  response.write(event({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  response.write(event({ choices: [], usage: { prompt_tokens: 12, completion_tokens: FOLLOWING_TOKENS + 1 } }));
  response.end('data: [DONE]\n\n');
}

function event(chunk: object): string {
  return `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 0, model: 'bench-model', ...chunk })}\n\n`;
}

await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
serveRequests({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` } satisfies ModelServerReady, {
  stop: async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  },
});
