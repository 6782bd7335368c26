import { z } from 'zod';
import { ThreadExportSchema } from '../threads/thread-export-schema.js';
import { frameJsonSchemas, type JsonSchema } from './json-schema.js';

/**
 * The published JSON Schema files, keyed by their path relative to a schema folder (`client/CPP_PROMPT.json`,
 * `server/CPP_SYNC_GRAPH.json`, the export format's `export/cpp-thread.json`), each as its exact text. A script
 * writes them and a test compares the committed copies with this, so the files are always a fresh generation and
 * never edited by hand.
 */
export function jsonSchemaFiles(): Record<string, string> {
  const { client, server } = frameJsonSchemas();
  const files: Record<string, string> = {};
  for (const [side, schemas] of Object.entries({ client, server })) {
    for (const [type, schema] of Object.entries(schemas)) files[`${side}/${type}.json`] = schemaText(schema);
  }
  files['export/cpp-thread.json'] = schemaText(
    z.toJSONSchema(ThreadExportSchema, { io: 'input', unrepresentable: 'any' }) as JsonSchema,
  );
  return files;
}

function schemaText(schema: JsonSchema): string {
  return `${JSON.stringify(schema, null, 2)}\n`;
}
