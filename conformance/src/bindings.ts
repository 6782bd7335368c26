import type { Json } from './json.js';

/** The scenario's variables: generated before it starts, captured from server frames as it runs. */
export type Bindings = ReadonlyMap<string, Json>;

export function lookUp(bindings: Bindings, name: string): Json {
  const value = bindings.get(name);
  if (value === undefined)
    throw new ScenarioError(`variable "${name}" is not bound yet (generate it, or $capture it from an earlier frame)`);
  return value;
}

/** A mistake in the scenario file itself, as opposed to a server that does not conform. */
export class ScenarioError extends Error {
  override readonly name = 'ScenarioError';
}
