import { readFileSync } from 'node:fs';
import asyncapiSpecs from '@asyncapi/specs';
import { Ajv } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { CLIENT_FRAME_TYPES, CPP_SESSION_PATH, SERVER_FRAME_TYPES } from '@promethea/cpp-protocol';

// The document is checked against the AsyncAPI project's own JSON Schema of the 3.1.0 format (@asyncapi/specs),
// instead of through @asyncapi/parser, whose linter pulls @scarf/scarf's telemetry install script into `npm ci`.
const DOCUMENT = new URL('../../docs/asyncapi.yaml', import.meta.url);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const readYaml = (url: URL): Json => parseYaml(readFileSync(url, 'utf8')) as Json;
const readJson = (url: URL): Json => JSON.parse(readFileSync(url, 'utf8')) as Json;

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function pointer(document: Json, fragment: string): Json {
  let value = document;
  for (const token of fragment
    .split('/')
    .slice(1)
    .map((part) => decodeURIComponent(part).replaceAll('~1', '/').replaceAll('~0', '~'))) {
    if (!isObject(value) || !(token in value)) throw new Error(`the reference #${fragment} names nothing`);
    value = value[token]!;
  }
  return value;
}

/**
 * The document with every $ref replaced by what it names: a JSON pointer into the document, or a file beside it (a
 * payload's JSON Schema), which is taken as it is: its own references stay its own.
 */
function dereferenced(document: Json): Json {
  const resolve = (value: Json, seen: readonly string[]): Json => {
    if (Array.isArray(value)) return value.map((item) => resolve(item, seen));
    if (!isObject(value)) return value;
    const reference = value.$ref;
    if (typeof reference === 'string') {
      if (!reference.startsWith('#')) return readJson(new URL(reference, DOCUMENT));
      if (seen.includes(reference)) throw new Error(`the reference ${reference} refers to itself`);
      return resolve(pointer(document, reference.slice(1)), [...seen, reference]);
    }
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolve(item, seen)]));
  };
  return resolve(document, []);
}

const object = (value: Json | undefined, what: string): JsonObject => {
  if (!isObject(value)) throw new Error(`${what} is not an object`);
  return value;
};
const list = (value: Json | undefined): Json[] => (Array.isArray(value) ? value : []);
const messageNames = (messages: Json | undefined) => list(messages).map((message) => object(message, 'a message').name);

describe('docs/asyncapi.yaml', () => {
  const source = readYaml(DOCUMENT);
  const document = object(dereferenced(source), 'the document');

  it('is a valid AsyncAPI 3.1.0 document', () => {
    // Formats (uri, email) are left unchecked: the document carries none that a reader would follow.
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(
      asyncapiSpecs.schemasWithoutId['3.1.0'],
    );
    validate(source);
    expect((validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`)).toEqual([]);
  });

  it('has one channel, the session endpoint, bound to WebSocket with the subprotocol header', () => {
    const channels = Object.values(object(document.channels, 'channels'));
    expect(channels.map((channel) => object(channel, 'a channel').address)).toEqual([CPP_SESSION_PATH]);
    const headers = object(
      object(object(object(channels[0], 'the channel').bindings, 'bindings').ws, 'the ws binding').headers,
      'headers',
    );
    expect(headers.required).toEqual(['Sec-WebSocket-Protocol']);
  });

  it('describes every frame as a message whose payload is the published JSON Schema of that frame', () => {
    const messages = object(object(document.components, 'components').messages, 'messages');
    expect(
      Object.values(messages)
        .map((message) => object(message, 'a message').name)
        .sort(),
      'each frame type needs a message in docs/asyncapi.yaml',
    ).toEqual([...CLIENT_FRAME_TYPES, ...SERVER_FRAME_TYPES].sort());
    for (const [side, types] of [
      ['client', CLIENT_FRAME_TYPES],
      ['server', SERVER_FRAME_TYPES],
    ] as const) {
      for (const type of types) {
        expect(object(messages[type], type).payload, type).toEqual({
          schemaFormat: 'application/schema+json;version=draft-07',
          schema: readJson(new URL(`../../docs/schemas/${side}/${type}.json`, import.meta.url)),
        });
      }
    }
  });

  it('has the server receive each client frame and send each server frame, with the direct answers as replies', () => {
    const operations = Object.values(object(document.operations, 'operations')).map((operation) =>
      object(operation, 'an operation'),
    );
    const names = (action: string) =>
      operations
        .filter((operation) => operation.action === action)
        .flatMap((operation) => messageNames(operation.messages));
    expect(names('receive').sort(), 'each client frame needs a receive operation in docs/asyncapi.yaml').toEqual(
      [...CLIENT_FRAME_TYPES].sort(),
    );
    expect(names('send').sort(), 'each server frame needs a send operation in docs/asyncapi.yaml').toEqual(
      [...SERVER_FRAME_TYPES].sort(),
    );
    const reply = (type: string) => {
      const operation = operations.find((candidate) => messageNames(candidate.messages)[0] === type);
      return messageNames(isObject(operation?.reply) ? operation.reply.messages : undefined);
    };
    expect(reply('CPP_THREAD_OPEN')).toEqual(['CPP_SYNC_GRAPH']);
    expect(reply('CPP_THREAD_LIST')).toEqual(['CPP_THREADS']);
  });
});
