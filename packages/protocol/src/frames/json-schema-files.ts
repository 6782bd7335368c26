import { frameJsonSchemas } from './json-schema.js';

/**
 * The published JSON Schema files, keyed by their path relative to a schema folder (`client/CPP_PROMPT.json`,
 * `server/CPP_SYNC_GRAPH.json`), each as its exact text. A script writes them and a test compares the committed
 * copies with this, so the files are always a fresh generation and never edited by hand.
 */
export function jsonSchemaFiles(): Record<string, string> {
  const { client, server } = frameJsonSchemas();
  const files: Record<string, string> = {};
  for (const [side, schemas] of Object.entries({ client, server })) {
    for (const [type, schema] of Object.entries(schemas)) files[`${side}/${type}.json`] = `${JSON.stringify(schema, null, 2)}\n`;
  }
  return files;
}
