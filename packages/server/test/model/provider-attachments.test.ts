import { createHash } from 'node:crypto';
import type { AttachmentMediaType } from '@promethea/cpp-protocol';
import { convertArrayToReadableStream, MockLanguageModelV3 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import type { ModelAttachment, ModelMessage, ModelProvider } from '../../src/model/model-provider.js';
import { createModelProvider } from '../../src/model/provider-factory.js';
import { AiSdkProvider } from '../../src/model/providers/ai-sdk-provider.js';
import { pdfDocument, pngImage } from '../support/test-files.js';
import { API_KEY, drain } from './provider-contract.js';
import { fixture, ndjson, type ReplayServer, sse, startReplayServer } from './replay-server.js';

function file(
  name: string,
  mediaType: AttachmentMediaType,
  data: Uint8Array,
  pixels?: [number, number],
): ModelAttachment {
  const size = pixels ? { width: pixels[0], height: pixels[1] } : {};
  const sha256 = createHash('sha256').update(data).digest('hex');
  return { name, mediaType, size: data.length, sha256, ...size, bytes: async () => data };
}

const PNG = pngImage(2, 2);
const PDF = pdfDocument('Quarterly report');
const NOTES = new TextEncoder().encode('a,b\n1,2');
const PNG_BASE64 = Buffer.from(PNG).toString('base64');
const PDF_BASE64 = Buffer.from(PDF).toString('base64');

/** A prompt carrying an image, a PDF and a CSV, after an earlier turn without files. */
const WITH_FILES: ModelMessage[] = [
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi.' },
  {
    role: 'user',
    content: 'What is in these?',
    attachments: [
      file('chart.png', 'image/png', PNG, [2, 2]),
      file('report.pdf', 'application/pdf', PDF),
      file('data.csv', 'text/plain', NOTES),
    ],
  },
];

const CSV_TEXT = '<file name="data.csv">\na,b\n1,2\n</file>';
const PDF_TEXT = '<file name="report.pdf" type="application/pdf" pages="1">\nQuarterly report\n</file>';
const IMAGE_NOTE = `[The person attached the image "chart.png" (image/png, 2×2 pixels, ${PNG.length} bytes); this model cannot read it, so only its name is given.]`;

const request = (provider: ModelProvider) =>
  drain(provider.stream({ messages: WITH_FILES, signal: new AbortController().signal }));

describe('files on each vendor’s wire', () => {
  let server: ReplayServer;
  afterEach(() => server?.close());

  it('openai-compatible: images as image_url parts with data: URLs; the PDF’s text and the CSV inlined', async () => {
    server = await startReplayServer(sse(fixture('openai-chat-stream.sse')));
    await request(createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'gpt-4o' }));

    expect(server.requests[0]?.body).toMatchObject({
      messages: [
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Hi.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: `What is in these?\n\n${PDF_TEXT}\n\n${CSV_TEXT}` },
            { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          ],
        },
      ],
    });
  });

  it('openai-compatible without vision: the image named in a note, never dropped', async () => {
    server = await startReplayServer(sse(fixture('openai-chat-stream.sse')));
    await request(
      createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'local', vision: false }),
    );

    expect((server.requests[0]!.body as { messages: unknown[] }).messages[2]).toEqual({
      role: 'user',
      content: `What is in these?\n\n${IMAGE_NOTE}\n\n${PDF_TEXT}\n\n${CSV_TEXT}`,
    });
  });

  it('anthropic: an image block and a document block before the text, the CSV inlined', async () => {
    server = await startReplayServer(sse(fixture('anthropic-messages-stream.sse')));
    await request(createModelProvider({ provider: 'anthropic', baseUrl: server.url, apiKey: API_KEY }));

    expect((server.requests[0]!.body as { messages: unknown[] }).messages[2]).toEqual({
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } },
        {
          type: 'document',
          source: { type: 'base64', media_type: 'application/pdf', data: PDF_BASE64 },
          title: 'report.pdf',
        },
        { type: 'text', text: `What is in these?\n\n${CSV_TEXT}` },
      ],
    });
  });

  it('ollama: text only by default (the image in a note); with vision, base64 images beside the text', async () => {
    server = await startReplayServer(
      ndjson(fixture('ollama-chat-stream.ndjson')),
      ndjson(fixture('ollama-chat-stream.ndjson')),
    );
    await request(createModelProvider({ provider: 'ollama', baseUrl: server.url }));
    await request(createModelProvider({ provider: 'ollama', baseUrl: server.url, model: 'llava', vision: true }));

    const prompts = server.requests.map((recorded) => (recorded.body as { messages: unknown[] }).messages[2]);
    expect(prompts).toEqual([
      { role: 'user', content: `What is in these?\n\n${IMAGE_NOTE}\n\n${PDF_TEXT}\n\n${CSV_TEXT}` },
      { role: 'user', content: `What is in these?\n\n${PDF_TEXT}\n\n${CSV_TEXT}`, images: [PNG_BASE64] },
    ]);
  });

  it('the AI SDK provider: images and PDFs as file parts with their names, the CSV inlined', async () => {
    const model = silentModel();
    await request(new AiSdkProvider({ model }));

    expect(model.doStreamCalls[0]?.prompt[2]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: `What is in these?\n\n${CSV_TEXT}` },
        { type: 'file', data: PNG, mediaType: 'image/png', filename: 'chart.png' },
        { type: 'file', data: PDF, mediaType: 'application/pdf', filename: 'report.pdf' },
      ],
    });
  });
});

/** A model of the AI SDK that answers nothing, for what it was asked. */
function silentModel() {
  return new MockLanguageModelV3({
    provider: 'mock.chat',
    modelId: 'mock-1',
    doStream: async () => ({
      stream: convertArrayToReadableStream([
        { type: 'stream-start' as const, warnings: [] },
        {
          type: 'finish' as const,
          finishReason: { unified: 'stop' as const, raw: 'stop' },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: 0, text: 0, reasoning: undefined },
          },
        },
      ]),
    }),
  });
}

/** A prompt of files alone (docs/PROTOCOL.md §6.5): an image and no text, after an earlier turn. */
const IMAGE_ALONE: ModelMessage[] = [
  { role: 'user', content: 'Hello' },
  { role: 'assistant', content: 'Hi.' },
  { role: 'user', content: ' ', attachments: [file('chart.png', 'image/png', PNG, [2, 2])] },
];

const requestImageAlone = (provider: ModelProvider) =>
  drain(provider.stream({ messages: IMAGE_ALONE, signal: new AbortController().signal }));

describe('a prompt of an image and no text on each vendor’s wire: the file alone, no empty text part', () => {
  let server: ReplayServer;
  afterEach(() => server?.close());

  it('openai-compatible: one image_url part; without vision, the note alone', async () => {
    server = await startReplayServer(sse(fixture('openai-chat-stream.sse')), sse(fixture('openai-chat-stream.sse')));
    await requestImageAlone(
      createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'gpt-4o' }),
    );
    await requestImageAlone(
      createModelProvider({ provider: 'openai-compatible', baseUrl: server.url, model: 'local', vision: false }),
    );

    const prompts = server.requests.map((recorded) => (recorded.body as { messages: unknown[] }).messages[2]);
    expect(prompts).toEqual([
      { role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } }] },
      { role: 'user', content: IMAGE_NOTE },
    ]);
  });

  it('anthropic: the image block alone', async () => {
    server = await startReplayServer(sse(fixture('anthropic-messages-stream.sse')));
    await requestImageAlone(createModelProvider({ provider: 'anthropic', baseUrl: server.url, apiKey: API_KEY }));

    expect((server.requests[0]!.body as { messages: unknown[] }).messages[2]).toEqual({
      role: 'user',
      content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG_BASE64 } }],
    });
  });

  it('ollama with vision: empty content beside the image', async () => {
    server = await startReplayServer(ndjson(fixture('ollama-chat-stream.ndjson')));
    await requestImageAlone(
      createModelProvider({ provider: 'ollama', baseUrl: server.url, model: 'llava', vision: true }),
    );

    expect((server.requests[0]!.body as { messages: unknown[] }).messages[2]).toEqual({
      role: 'user',
      content: '',
      images: [PNG_BASE64],
    });
  });

  it('the AI SDK provider: the file part alone', async () => {
    const model = silentModel();
    await requestImageAlone(new AiSdkProvider({ model }));

    expect(model.doStreamCalls[0]?.prompt[2]).toEqual({
      role: 'user',
      content: [{ type: 'file', data: PNG, mediaType: 'image/png', filename: 'chart.png' }],
    });
  });
});
