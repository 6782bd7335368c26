import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { SERVER_FRAME_TYPES, type ServerFrame } from '@promethea/cpp-protocol';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { isJsonObject } from './json.js';

export type Validation =
  | { kind: 'frame'; frame: ServerFrame }
  | { kind: 'ignored'; type: string }
  | { kind: 'invalid'; message: string };

const require = createRequire(import.meta.url);

/**
 * Checks each server frame against the JSON Schema files the protocol package publishes, the same files another
 * implementation would use. A frame of a type this version does not know is ignored, as §15 tells clients to do.
 */
export class FrameValidator {
  private readonly validators: ReadonlyMap<string, ValidateFunction>;

  constructor() {
    const ajv = new Ajv2020({ strict: true, allErrors: false });
    this.validators = new Map(SERVER_FRAME_TYPES.map((type) => [type, ajv.compile(publishedSchema(type))]));
  }

  validate(text: string): Validation {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      return { kind: 'invalid', message: `a server frame is not JSON: ${text.slice(0, 120)}` };
    }
    if (!isJsonObject(value) || typeof value.type !== 'string')
      return { kind: 'invalid', message: `a server frame is not an object with a string type: ${text.slice(0, 120)}` };
    const type = value.type;
    const validator = this.validators.get(type);
    if (!validator) return { kind: 'ignored', type };
    if (!validator(value)) {
      const error = validator.errors?.[0];
      return {
        kind: 'invalid',
        message: `${type} does not match its published JSON Schema: ${error?.instancePath || '(frame)'} ${error?.message ?? ''}`,
      };
    }
    return { kind: 'frame', frame: value as unknown as ServerFrame };
  }
}

function publishedSchema(type: string): object {
  const file = `@promethea/cpp-protocol/schemas/server/${type}.json`;
  try {
    return JSON.parse(readFileSync(require.resolve(file), 'utf8')) as object;
  } catch (error) {
    throw new Error(
      `no published JSON Schema ${file}: after changing frames, run npm run schemas -w @promethea/cpp-protocol`,
      { cause: error },
    );
  }
}
