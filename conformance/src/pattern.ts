import type { TextPart } from '@promethea/cpp-protocol';
import { lookUp, ScenarioError, type Bindings } from './bindings.js';
import { isJsonObject, jsonEqual, preview, type Json, type JsonObject } from './json.js';

/** What a node's text looks like on one connection: what it was streamed, and where each chunk began. */
export interface StreamedText {
  text: string;
  chunkStarts: readonly number[];
}

export interface MatchContext {
  bindings: Bindings;
  /** The text of a node's part (default: its content) as the connection holds it before the frame being matched. */
  streamed(nodeId: string, part?: TextPart): StreamedText | undefined;
}

export type MatchResult = { ok: true; bindings: Map<string, Json> } | { ok: false; message: string };

interface State {
  bindings: Map<string, Json>;
  context: MatchContext;
}

type Mismatch = string | undefined;
type Operator = (argument: Json, actual: unknown, path: string, state: State, parameters: JsonObject) => Mismatch;

/**
 * Matches a server frame against a pattern of a scenario file. Plain values must be equal; an object matches any
 * object holding at least its keys (receivers ignore unknown fields); an array matches element by element. An
 * object whose keys begin with `$` is an operator (`$any`, `$match`, `$capture`, …, see conformance/README.md);
 * its other keys are the operator's parameters. Keys are checked in the order they are written, so a `$capture`
 * is usable by every `$ref` after it.
 */
export function matchPattern(pattern: Json, actual: unknown, context: MatchContext): MatchResult {
  const state: State = { bindings: new Map(context.bindings), context };
  const mismatch = match(pattern, actual, '', state);
  return mismatch === undefined ? { ok: true, bindings: state.bindings } : { ok: false, message: mismatch };
}

function match(pattern: Json, actual: unknown, path: string, state: State): Mismatch {
  if (Array.isArray(pattern)) return matchArray(pattern, actual, path, state);
  if (!isJsonObject(pattern)) return jsonEqual(pattern, actual) ? undefined : expected(path, preview(pattern), actual);
  const operators = Object.keys(pattern).filter((key) => key.startsWith('$'));
  if (operators.length > 0) return matchOperators(pattern, operators, actual, path, state);
  if (!isJsonObject(actual)) return expected(path, 'an object', actual);
  for (const [key, value] of Object.entries(pattern)) {
    const mismatch = match(value, actual[key], join(path, key), state);
    if (mismatch !== undefined) return mismatch;
  }
  return undefined;
}

function matchArray(pattern: Json[], actual: unknown, path: string, state: State): Mismatch {
  if (!Array.isArray(actual)) return expected(path, 'an array', actual);
  if (actual.length !== pattern.length) return expected(path, `an array of ${pattern.length}`, actual);
  for (const [index, item] of pattern.entries()) {
    const mismatch = match(item, actual[index], `${path}[${index}]`, state);
    if (mismatch !== undefined) return mismatch;
  }
  return undefined;
}

function matchOperators(
  pattern: JsonObject,
  operators: string[],
  actual: unknown,
  path: string,
  state: State,
): Mismatch {
  const parameters = Object.fromEntries(Object.entries(pattern).filter(([key]) => !key.startsWith('$')));
  for (const name of operators) {
    const operator = OPERATORS[name];
    if (!operator) throw new ScenarioError(`unknown operator ${name} at ${path || '(frame)'}`);
    const mismatch = operator(pattern[name]!, actual, path, state, parameters);
    if (mismatch !== undefined) return mismatch;
  }
  return undefined;
}

const OPERATORS: Record<string, Operator> = {
  $any: (kind, actual, path) =>
    isOfKind(kind, actual) ? undefined : expected(path, kind === true ? 'any value' : `any ${String(kind)}`, actual),
  $match: (regex, actual, path) =>
    typeof actual === 'string' && new RegExp(text(regex, '$match'), 'u').test(actual)
      ? undefined
      : expected(path, `a string matching /${String(regex)}/`, actual),
  $capture: (name, actual, path, state) => {
    if (actual === undefined) return expected(path, `a value to capture as ${String(name)}`, actual);
    const bound = state.bindings.get(text(name, '$capture'));
    if (bound !== undefined)
      return jsonEqual(bound, actual)
        ? undefined
        : expected(path, `${preview(bound)} (already captured as ${String(name)})`, actual);
    state.bindings.set(text(name, '$capture'), actual as Json);
    return undefined;
  },
  $ref: (name, actual, path, state) => {
    const value = lookUp(state.bindings, text(name, '$ref'));
    return jsonEqual(value, actual) ? undefined : expected(path, `${preview(value)} (${String(name)})`, actual);
  },
  $absent: (_, actual, path) => (actual === undefined ? undefined : expected(path, 'no such field', actual)),
  $not: (pattern, actual, path, state) => {
    const trial = { ...state, bindings: new Map(state.bindings) };
    return match(pattern, actual, path, trial) === undefined
      ? expected(path, `anything but ${preview(pattern)}`, actual)
      : undefined;
  },
  $in: (values, actual, path) =>
    list(values, '$in').some((value) => jsonEqual(value, actual))
      ? undefined
      : expected(path, `one of ${preview(values)}`, actual),
  $gte: (bound, actual, path) =>
    typeof actual === 'number' && actual >= number(bound, '$gte')
      ? undefined
      : expected(path, `a number ≥ ${String(bound)}`, actual),
  $lte: (bound, actual, path) =>
    typeof actual === 'number' && actual <= number(bound, '$lte')
      ? undefined
      : expected(path, `a number ≤ ${String(bound)}`, actual),
  $length: (pattern, actual, path, state) => {
    if (typeof actual !== 'string' && !Array.isArray(actual)) return expected(path, 'a string or an array', actual);
    return match(pattern, actual.length, `${path}.length`, state);
  },
  $contains: (pattern, actual, path, state) => {
    if (!Array.isArray(actual)) return expected(path, 'an array', actual);
    for (const item of actual) {
      const trial = { ...state, bindings: new Map(state.bindings) };
      if (match(pattern, item, path, trial) === undefined) {
        state.bindings = trial.bindings;
        return undefined;
      }
    }
    return expected(path, `an array containing ${preview(pattern)}`, actual);
  },
  $values: (patterns, actual, path, state) => matchValues(list(patterns, '$values'), actual, path, state),
  $streamed: (name, actual, path, state, parameters) => {
    const streamed = streamedText(name, state, parameters);
    const value = streamed.text.slice(0, cutOf(parameters, streamed, state));
    return value === actual ? undefined : expected(path, `the streamed text ${preview(value)}`, actual);
  },
  $streamedLength: (name, actual, path, state, parameters) => {
    const length = streamedText(name, state, parameters).text.length;
    return actual === length ? undefined : expected(path, `the streamed length ${length}`, actual);
  },
  $lastChunk: (name, actual, path, state, parameters) => {
    const streamed = streamedText(name, state, parameters);
    const cut = cutOf(parameters, streamed, state);
    const start = streamed.chunkStarts.filter((offset) => offset < cut).at(-1) ?? cut;
    const value = streamed.text.slice(start, cut);
    return value === actual
      ? undefined
      : expected(path, `the part of the last chunk before the cut, ${preview(value)}`, actual);
  },
};

/** An object or array whose values match the patterns one to one, in any order (e.g. the nodes of a patch). */
function matchValues(patterns: Json[], actual: unknown, path: string, state: State): Mismatch {
  if (!isJsonObject(actual) && !Array.isArray(actual)) return expected(path, 'an object or an array', actual);
  const entries: [string, Json][] = Array.isArray(actual)
    ? actual.map((value: Json, index) => [`[${index}]`, value])
    : Object.entries(actual);
  if (entries.length !== patterns.length) return expected(path, `${patterns.length} entries`, actual);
  const assign = (index: number, used: Set<string>, bindings: Map<string, Json>): Map<string, Json> | undefined => {
    if (index === patterns.length) return bindings;
    for (const [key, value] of entries) {
      if (used.has(key)) continue;
      const trial = { ...state, bindings: new Map(bindings) };
      if (match(patterns[index]!, value, entryPath(path, key), trial) !== undefined) continue;
      const result = assign(index + 1, new Set([...used, key]), trial.bindings);
      if (result) return result;
    }
    return undefined;
  };
  const result = assign(0, new Set(), state.bindings);
  if (!result)
    return (
      firstMismatch(patterns, entries, path, state) ?? expected(path, `entries matching ${preview(patterns)}`, actual)
    );
  state.bindings = result;
  return undefined;
}

/** The most useful explanation of a failed `$values`: the first pattern that matches no entry at all. */
function firstMismatch(patterns: Json[], entries: [string, Json][], path: string, state: State): Mismatch {
  for (const pattern of patterns) {
    const mismatches = entries.map(([key, value]) =>
      match(pattern, value, entryPath(path, key), { ...state, bindings: new Map(state.bindings) }),
    );
    if (mismatches.every((mismatch) => mismatch !== undefined))
      return `no entry of ${path || '(frame)'} matches ${preview(pattern, 120)}: ${mismatches.join('; ')}`;
  }
  return undefined;
}

/** The streamed text of the node `name`, of the part the `part` parameter names (default: its content). */
function streamedText(name: Json, state: State, parameters: JsonObject): StreamedText {
  const nodeId = lookUp(state.bindings, text(name, '$streamed'));
  const part = parameters.part ?? 'content';
  if (part !== 'content' && part !== 'reasoning')
    throw new ScenarioError(`part is "content" or "reasoning", not ${preview(part)}`);
  const streamed = typeof nodeId === 'string' ? state.context.streamed(nodeId, part) : undefined;
  if (!streamed) throw new ScenarioError(`this connection holds no text of node ${preview(nodeId)} (${String(name)})`);
  return streamed;
}

/** The `cut` parameter (a number or a `$ref`), or the whole text. */
function cutOf(parameters: JsonObject, streamed: StreamedText, state: State): number {
  const cut = parameters.cut;
  if (cut === undefined) return streamed.text.length;
  const value = isJsonObject(cut) && typeof cut.$ref === 'string' ? lookUp(state.bindings, cut.$ref) : cut;
  return number(value, 'cut');
}

function isOfKind(kind: Json, actual: unknown): boolean {
  if (kind === true) return actual !== undefined;
  switch (kind) {
    case 'integer':
      return Number.isInteger(actual);
    case 'array':
      return Array.isArray(actual);
    case 'object':
      return isJsonObject(actual);
    case 'null':
      return actual === null;
    case 'string':
    case 'number':
    case 'boolean':
      return typeof actual === kind;
    default:
      throw new ScenarioError(`$any takes true or a JSON type name, not ${preview(kind)}`);
  }
}

function text(value: Json, operator: string): string {
  if (typeof value !== 'string') throw new ScenarioError(`${operator} takes a string, not ${preview(value)}`);
  return value;
}

function number(value: Json, operator: string): number {
  if (typeof value !== 'number') throw new ScenarioError(`${operator} takes a number, not ${preview(value)}`);
  return value;
}

function list(value: Json, operator: string): Json[] {
  if (!Array.isArray(value)) throw new ScenarioError(`${operator} takes an array, not ${preview(value)}`);
  return value;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

function entryPath(path: string, key: string): string {
  return key.startsWith('[') ? `${path}${key}` : join(path, key);
}

function expected(path: string, what: string, actual: unknown): string {
  return `${path || '(frame)'}: expected ${what}, got ${preview(actual)}`;
}
