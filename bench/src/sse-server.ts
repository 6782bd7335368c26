import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeServerFrame, newMessageId } from '@promethea/cpp-protocol';
import { pushPacedChunks, type BaselineServer, type BaselineStreams } from './baseline-server.js';
import { SSE_CHAT_PATH, type SseChatRequest } from './peer-protocols.js';

/**
 * The Server-Sent Events peer (the transport of the AI SDK's `useChat` and of LibreChat): each answer is the
 * response to a POST over HTTP/1.1, its chunks the very ones a CPP stream carries on the same schedule, each an SSE
 * event whose data is the CPP_STREAM_CHUNK frame. A client stops an answer by aborting its request (the connection
 * closes) and asks for another with a new POST carrying the conversation: a pivot as those apps make it.
 */
export async function startSseServer(streams: BaselineStreams): Promise<BaselineServer> {
  const http = createServer((request, response) => {
    if (request.method !== 'POST' || request.url !== SSE_CHAT_PATH) {
      response.writeHead(404).end();
      return;
    }
    void readJson(request).then(
      (chat) => {
        const controller = new AbortController();
        response.on('close', () => controller.abort());
        response.writeHead(200, {
          'content-type': 'text/event-stream',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
        });
        // The headers leave at once, as a streaming route sends them before the model's first token.
        response.flushHeaders();
        const target = { threadId: chat.id, nodeId: newMessageId() };
        void pushPacedChunks(streams, controller.signal, (delta, offset) =>
          response.write(`data: ${encodeServerFrame('CPP_STREAM_CHUNK', { ...target, offset, delta })}\n\n`),
        );
      },
      () => response.writeHead(400).end(),
    );
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    port: (http.address() as AddressInfo).port,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function readJson(request: IncomingMessage): Promise<SseChatRequest> {
  const parts: Buffer[] = [];
  for await (const part of request) parts.push(part as Buffer);
  return JSON.parse(Buffer.concat(parts).toString('utf8')) as SseChatRequest;
}
