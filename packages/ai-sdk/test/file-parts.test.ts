import { CPPClient } from '@promethea/cpp-client';
import { newThreadId } from '@promethea/cpp-protocol';
import { type CPPServer, DemoProvider } from '@promethea/cpp-server';
import type { UIMessage, UIMessageChunk } from 'ai';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer } from '../../server/test/support/start-server.js';
import { pngImage } from '../../server/test/support/test-files.js';
import { CPPChatTransport } from '../src/index.js';

describe('CPPChatTransport with file parts', () => {
  let server: CPPServer | undefined;
  let client: CPPClient | undefined;
  afterEach(async () => {
    await client?.close();
    await server?.close();
  });

  it('uploads a message’s file parts (data: URLs, as useChat makes them), which the prompt carries', async () => {
    server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 60 }) });
    client = new CPPClient({ endpoint: server.url, reconnect: false });
    const threadId = newThreadId();
    const transport = new CPPChatTransport({ client, threadId: () => threadId });
    const image = pngImage(3, 1);
    const message: UIMessage = {
      id: 'user-1',
      role: 'user',
      parts: [
        {
          type: 'file',
          mediaType: 'image/png',
          filename: 'dot.png',
          url: `data:image/png;base64,${Buffer.from(image).toString('base64')}`,
        },
        { type: 'file', mediaType: 'text/csv', filename: 'data.csv', url: 'data:text/csv;base64,YSxiCjEsMgo=' },
        { type: 'text', text: 'What are these?' },
      ],
    };

    const stream = await transport.sendMessages({
      chatId: 'chat',
      messages: [message],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const chunks: UIMessageChunk[] = [];
    const reader = stream.getReader();
    for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);

    const text = chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
    expect(text).toContain(
      `You attached the image "dot.png" (image/png, 3×1 pixels, ${image.length} bytes); the file "data.csv" (text/plain, 8 bytes), which begins: "a,b / 1,2".`,
    );
    const prompt = Object.values(client.graph(threadId)!.nodes).find((node) => node.role === 'user');
    expect(prompt?.attachments?.map(({ name, mediaType }) => [name, mediaType])).toEqual([
      ['dot.png', 'image/png'],
      ['data.csv', 'text/plain'],
    ]);
  });

  it('sends a message of a file part and no text, which the server answers; one of neither is refused before it goes', async () => {
    server = await startServer({ model: new DemoProvider({ delayMs: 0, words: 60 }) });
    client = new CPPClient({ endpoint: server.url, reconnect: false });
    const threadId = newThreadId();
    const transport = new CPPChatTransport({ client, threadId: () => threadId });
    const image = pngImage(2, 2);
    const send = (parts: UIMessage['parts']) =>
      transport.sendMessages({
        chatId: 'chat',
        messages: [{ id: 'user-1', role: 'user', parts }],
        trigger: 'submit-message',
        messageId: undefined,
        abortSignal: undefined,
      });

    const chunksOf = async (stream: ReadableStream<UIMessageChunk>) => {
      const chunks: UIMessageChunk[] = [];
      const reader = stream.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) chunks.push(read.value);
      return chunks;
    };
    expect(await chunksOf(await send([]))).toContainEqual({
      type: 'error',
      errorText: expect.stringContaining('the message to send has no text and no file'),
    });
    const stream = await send([
      {
        type: 'file',
        mediaType: 'image/png',
        filename: 'shot.png',
        url: `data:image/png;base64,${Buffer.from(image).toString('base64')}`,
      },
    ]);

    const text = (await chunksOf(stream)).map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');
    expect(text).toContain(`You attached the image "shot.png" (image/png, 2×2 pixels, ${image.length} bytes).`);
    const prompt = Object.values(client.graph(threadId)!.nodes).find((node) => node.role === 'user');
    expect(prompt).toMatchObject({ content: '', attachments: [{ name: 'shot.png' }] });
  });
});
