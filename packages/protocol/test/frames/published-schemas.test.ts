import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CLIENT_FRAME_TYPES, SERVER_FRAME_TYPES, frameJsonSchemas, jsonSchemaFiles } from '@promethea/cpp-protocol';

const folders = {
  'packages/protocol/schemas (published in the npm package)': fileURLToPath(new URL('../../schemas', import.meta.url)),
  'docs/schemas': fileURLToPath(new URL('../../../../docs/schemas', import.meta.url)),
};

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.json'))
    .map((path) => relative(folder, join(folder, path)).split('\\').join('/'))
    .sort();
}

describe('the published JSON Schema files', () => {
  const fresh = jsonSchemaFiles();

  it('are one file per frame type, client and server, each a frame schema of frameJsonSchemas(), and the export format', () => {
    expect(Object.keys(fresh).sort()).toEqual(
      [
        ...CLIENT_FRAME_TYPES.map((type) => `client/${type}.json`),
        ...SERVER_FRAME_TYPES.map((type) => `server/${type}.json`),
        'export/cpp-thread.json',
      ].sort(),
    );
    expect(JSON.parse(fresh['server/CPP_SYNC_GRAPH.json']!)).toEqual(frameJsonSchemas().server.CPP_SYNC_GRAPH);
  });

  // Fails when a schema changed without `npm run schemas -w @promethea/cpp-protocol`, or a file was edited by hand.
  it.each(Object.entries(folders))('in %s equal a fresh generation', (_, folder) => {
    expect(filesUnder(folder)).toEqual(Object.keys(fresh).sort());
    for (const [path, text] of Object.entries(fresh)) expect(readFileSync(join(folder, path), 'utf8'), path).toBe(text);
  });
});
