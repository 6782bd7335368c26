import { readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { Scenario } from './scenario.js';

/** The kit's own scenarios, shipped beside the runner. */
export const SCENARIO_DIRECTORY = fileURLToPath(new URL('../scenarios', import.meta.url));
const SCENARIO_SCHEMA = fileURLToPath(new URL('../scenario.schema.json', import.meta.url));

/** Every `*.json` scenario of a folder, in file-name order, each checked against scenario.schema.json. */
export function loadScenarios(directory = SCENARIO_DIRECTORY): Scenario[] {
  const validate = new Ajv2020({ strict: false, allErrors: false }).compile(
    JSON.parse(readFileSync(SCENARIO_SCHEMA, 'utf8')) as object,
  );
  return readdirSync(directory)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const value: unknown = JSON.parse(readFileSync(join(directory, file), 'utf8'));
      if (!validate(value)) {
        const error = validate.errors?.[0];
        throw new Error(`${file} is not a valid scenario: ${error?.instancePath || '(file)'} ${error?.message ?? ''}`);
      }
      return { ...(value as Omit<Scenario, 'name'>), name: basename(file, '.json') };
    });
}
