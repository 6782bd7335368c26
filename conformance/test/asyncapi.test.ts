import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Parser, fromFile, type AsyncAPIDocumentInterface } from '@asyncapi/parser';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLIENT_FRAME_TYPES, CPP_SESSION_PATH, SERVER_FRAME_TYPES } from '@promethea/cpp-protocol';

const DOCUMENT = fileURLToPath(new URL('../../docs/asyncapi.yaml', import.meta.url));
const schemaFile = (side: 'client' | 'server', type: string) => fileURLToPath(new URL(`../../docs/schemas/${side}/${type}.json`, import.meta.url));

/** The parser marks the schemas it resolved with x-parser-* keys; what is left must be the published file. */
function withoutParserMarks(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutParserMarks);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).filter(([key]) => !key.startsWith('x-parser-')).map(([key, item]) => [key, withoutParserMarks(item)]));
}

describe('docs/asyncapi.yaml', () => {
  let document: AsyncAPIDocumentInterface;

  beforeAll(async () => {
    const { document: parsed, diagnostics } = await fromFile(new Parser(), DOCUMENT).parse();
    // Errors and warnings alike: the document is kept free of both.
    expect(diagnostics.map((diagnostic) => `${diagnostic.code} at ${diagnostic.path.join('.')}: ${diagnostic.message}`)).toEqual([]);
    if (!parsed) throw new Error('the AsyncAPI document did not parse');
    document = parsed;
  }, 60_000);

  it('is AsyncAPI 3 with one channel, the session endpoint, bound to WebSocket with the subprotocol header', () => {
    expect(document.version()).toMatch(/^3\./);
    const channels = document.channels().all();
    expect(channels.map((channel) => channel.address())).toEqual([CPP_SESSION_PATH]);
    const binding = channels[0]!.bindings().get('ws')?.value<{ headers: { required: string[] } }>();
    expect(binding?.headers.required).toEqual(['Sec-WebSocket-Protocol']);
  });

  it('describes every frame as a message whose payload is the published JSON Schema of that frame', () => {
    const messages = document.messages().all();
    expect(messages.map((message) => message.name()).sort(), 'each frame type needs a message in docs/asyncapi.yaml').toEqual([...CLIENT_FRAME_TYPES, ...SERVER_FRAME_TYPES].sort());
    for (const [side, types] of [['client', CLIENT_FRAME_TYPES], ['server', SERVER_FRAME_TYPES]] as const) {
      for (const type of types) {
        const payload = messages.find((message) => message.name() === type)?.payload()?.json();
        expect(withoutParserMarks(payload), type).toEqual({
          schemaFormat: 'application/schema+json;version=draft-07',
          schema: JSON.parse(readFileSync(schemaFile(side, type), 'utf8')),
        });
      }
    }
  });

  it('has the server receive each client frame and send each server frame, with the direct answers as replies', () => {
    const operations = document.operations().all();
    const names = (action: string) => operations.filter((operation) => operation.action() === action).flatMap((operation) => operation.messages().all().map((message) => message.name()));
    expect(names('receive').sort(), 'each client frame needs a receive operation in docs/asyncapi.yaml').toEqual([...CLIENT_FRAME_TYPES].sort());
    expect(names('send').sort(), 'each server frame needs a send operation in docs/asyncapi.yaml').toEqual([...SERVER_FRAME_TYPES].sort());
    const reply = (type: string) => operations.find((operation) => operation.messages().all()[0]?.name() === type)?.reply()?.messages().all().map((message) => message.name());
    expect(reply('CPP_THREAD_OPEN')).toEqual(['CPP_SYNC_GRAPH']);
    expect(reply('CPP_THREAD_LIST')).toEqual(['CPP_THREADS']);
  });
});
